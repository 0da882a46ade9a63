"""PersonalLLM as the authors measure it: a model writes for each simulated user
(``personalllm_gen`` through ``prb eval``), then ``prb personalllm score`` scores every
response with reward models (two tiny offline ones standing in for the ten), weights
them per user and reports the mean reward and the two win rates; scores are cached per
(reward model, response)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.cli import main
from prb_tasks.common.errors import PRBError
from prb_tasks.data.personalllm.constants import NORMALISATION, REWARD_MODELS
from prb_tasks.scoring.personalllm_gen import Generated, rm_arguments, summarise, user_rewards
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.runner import read_samples, run_cli

OPTIONS = {"preset": "paper", "n_users": 6, "k": 2, "reference_model": "writer-1"}


def _gen(user: str, best: float, reference: float | None, weights=None, flip: bool = False) -> Generated:
    return Generated(user, "q", "r", tuple(weights or [0.1] * 10), flip, best, reference)


def test_win_rates_are_strict_and_intervals_resample_users() -> None:
    gens = [_gen("u1", 1.0, 0.0), _gen("u1", 1.0, 2.0), _gen("u2", 0.5, 0.5), _gen("u3", -1.0, None)]
    rewards = np.array([1.5, 1.0, 0.5, -0.5])
    out = summarise(rewards, gens, resamples=500)
    # best: 1.5 > 1.0 wins, 1.0 = 1.0 is no win, 0.5 = 0.5 no win, -0.5 > -1.0 wins.
    assert out["win_rate_best"] == pytest.approx(50.0)
    # reference (3 rows have one): 1.5 > 0 wins, 1.0 < 2 loses, 0.5 = 0.5 is no win.
    assert out["win_rate_reference"] == pytest.approx(100 / 3) and out["reference_missing"] == 1
    assert out["mean_reward"] == pytest.approx(0.625) and out["users"] == 3
    low, high = out["mean_reward_ci"]
    assert low <= 0.625 <= high
    # Users are resampled whole: with one user per value the interval is the user means' range at most.
    assert low >= min(1.25, 0.5, -0.5) and high <= max(1.25, 0.5, -0.5)
    none = summarise(rewards, [_gen(g.user, g.best, None) for g in gens])
    assert none["win_rate_reference"] is None


def test_authors_presets_divide_the_reference_win_rate_by_every_row(capsys) -> None:
    # The authors' eval.py: (score > gpt4o_reward) over len(df); a missing reward is NaN there, never won.
    gens = [Generated(g.user, "q", "r", g.weights, False, g.best, g.reference, "paper") for g in (
        _gen("u1", 1.0, 0.0), _gen("u1", 1.0, 2.0), _gen("u2", 0.5, 0.5), _gen("u3", -1.0, None))]
    rewards = np.array([1.5, 1.0, 0.5, -0.5])
    out = summarise(rewards, gens, resamples=200)
    references = [np.nan if g.reference is None else g.reference for g in gens]
    theirs = (rewards > np.asarray(references)).sum() / len(gens) * 100
    assert out["win_rate_reference"] == pytest.approx(theirs) == pytest.approx(25.0)
    assert out["reference_rule"] == "all_rows" and out["reference_missing"] == 1
    from prb_tasks.scoring.personalllm_gen import _print

    _print({**out, "samples": "s.jsonl", "scored_fresh": {}, "scored_from_cache": 0})
    assert "1 rows without a reference response count as not won" in capsys.readouterr().out
    # prb's own items keep leaving such rows out, and say so.
    assert summarise(rewards, [_gen(g.user, g.best, g.reference) for g in gens])["reference_rule"] == \
        "rows_with_reference"


def test_user_reward_is_weights_times_published_z_scores() -> None:
    raw = np.array([[NORMALISATION[m][0] + NORMALISATION[m][1] * (i + 1) for i, m in enumerate(REWARD_MODELS)]])
    weights = [0.0] * 10
    weights[0], weights[3] = 0.25, 0.75  # beaver_7b (z = 1), llama3_sfairx (z = 4)
    assert user_rewards(raw, [_gen("u", 0, None, weights)])[0] == pytest.approx(0.25 * 1 + 0.75 * 4)
    assert user_rewards(raw, [_gen("u", 0, None, weights, flip=True)])[0] == pytest.approx(-0.25 + 3.0)


def test_reward_model_arguments_and_their_mistakes(tmp_path: Path) -> None:
    default = rm_arguments([], None, None)
    assert default["gemma_2b"] == {"pretrained": "weqweasdas/RM-Gemma-2B"} and len(default) == 10
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    mixed = rm_arguments([f"gemma_2b=pretrained={a},batch_size=4"], f"pretrained={b}", "device=cpu")
    assert mixed["gemma_2b"] == {"device": "cpu", "pretrained": str(a), "batch_size": 4}
    assert mixed["beaver_7b"] == {"device": "cpu", "pretrained": str(b)}
    # Every reward model's arguments are checked before any model loads.
    for bad, words in ((["gema_2b=pretrained=/a"], "did you mean 'gemma_2b'"), (["gemma_2b"], "NAME=ARGS"),
                       (["gemma_2b=pretrained=/a", "gemma_2b=pretrained=/b"], "twice"),
                       (["oasst_pythia_7b=pretrianed=org/x"], "reward model oasst_pythia_7b: prb-rm: unknown "
                        "model_args key 'pretrianed' (did you mean 'pretrained'?)"),
                       ([f"gemma_2b=pretrained={tmp_path / 'none'}"], "reward model gemma_2b: prb-rm: model_args "
                        "pretrained=")):
        with pytest.raises(PRBError) as err:
            rm_arguments(bad, None, None)
        assert words in str(err.value) and "\n" not in str(err.value)


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_personalllm(tmp_path_factory.mktemp("pllm_gen"), fixture_rows(20, seed=4))


@pytest.fixture(scope="module")
def tiny_rms(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pytest.importorskip("torch")
    from prb_tasks.testing.tiny_rm import build_tiny_rm

    root = tmp_path_factory.mktemp("tiny_rms")
    return build_tiny_rm(root / "a", "gpt2", seed=1), build_tiny_rm(root / "b", "llama", seed=2)


def _question(prompt: str) -> str:
    # The test question is the last "User: " turn (earlier ones are the in-context examples).
    return prompt.rsplit("User: ", 1)[1].split("\nResponse:")[0].strip()


def _policy(messages: list[Message], model: str) -> str:
    question = _question(messages[-1]["content"])
    number = int(re.search(r"Question (\d+)", question).group(1))
    # Policy b writes what policy a writes for even-numbered questions only.
    if model.endswith("b") and number % 2:
        return f"A different reply to question {number}."
    return f"Reply to question {number}, written for you."


def _generate(tmp_path: Path, copy_dir: Path, name: str, server: FakeLLMServer) -> Path:
    out = tmp_path / f"run_{name}"
    proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                    f"model=openai/fake-{name},api_base={server.openai_base},cache_dir={tmp_path / 'jcache'}",
                    "--tasks", "personalllm_gen", "--metadata", json.dumps({"data_dir": str(copy_dir), **OPTIONS}),
                    "--output_path", str(out), "--log_samples"], cwd=tmp_path, env={"OPENAI_API_KEY": "sk-fake"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _score(paths: list[Path], tiny_rms: tuple[Path, Path], cache: Path, report: Path, capsys) -> dict:
    a, b = tiny_rms
    code = main(["personalllm", "score", *map(str, paths), "--rm", f"gemma_2b=pretrained={a}",
                 "--other-rms", f"pretrained={b}", "--rm-args", f"device=cpu,cache_dir={cache}",
                 "--json", str(report), "--quiet"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    return json.loads(report.read_text())[0] | {"printed": printed.out}


@pytest.mark.slow
def test_generation_then_scoring_end_to_end(tmp_path: Path, copy_dir: Path, tiny_rms, capsys) -> None:
    with FakeLLMServer(_policy, record_requests=False) as server:
        run_a = _generate(tmp_path, copy_dir, "a", server)
        run_b = _generate(tmp_path, copy_dir, "b", server)
    samples = read_samples(run_a, "personalllm_gen")
    assert len(samples) == 6 and all(s["doc"]["shots"] == 2 for s in samples)
    assert all(s["filtered_resps"][0].startswith("Reply to question") for s in samples)

    cache = tmp_path / "scores"
    first = _score([run_a], tiny_rms, cache, tmp_path / "a.json", capsys)
    # Two distinct stand-ins: six responses scored by each once; the nine names sharing
    # stand-in b reuse its scores.
    assert sum(first["scored_fresh"].values()) == 12 and first["scored_fresh"]["gemma_2b"] == 6

    # The reported numbers follow from the per-response rewards, computed independently.
    detail = first["per_response"]
    docs = {s["doc"]["question"]: s["doc"] for s in samples}
    for row in detail:
        doc = docs[row["question"]]
        z = [(row["raw_scores"][m] - NORMALISATION[m][0]) / NORMALISATION[m][1] for m in REWARD_MODELS]
        assert row["reward"] == pytest.approx(float(np.dot(doc["user_weights"], z)))
        assert row["raw_scores"]["beaver_7b"] == row["raw_scores"]["oasst_pythia_7b"]  # both stand-in b
        assert row["raw_scores"]["gemma_2b"] != row["raw_scores"]["beaver_7b"]
        assert row["best_response_reward"] == pytest.approx(max(doc["dataset_rewards"]))
        assert row["reference_reward"] == pytest.approx(doc["dataset_rewards"][0])  # writer-1
    rewards = np.array([r["reward"] for r in detail])
    assert first["mean_reward"] == pytest.approx(rewards.mean())
    assert first["win_rate_best"] == pytest.approx(
        100 * np.mean([r["reward"] > r["best_response_reward"] for r in detail]))
    assert first["win_rate_reference"] == pytest.approx(
        100 * np.mean([r["reward"] > r["reference_reward"] for r in detail]))
    assert "win_rate_reference" in first["printed"] and "12 scores computed, 0 from the score cache" in first["printed"]

    # A second run scores nothing: every score comes from the cache, and the numbers agree.
    again = _score([run_a], tiny_rms, cache, tmp_path / "a2.json", capsys)
    assert sum(again["scored_fresh"].values()) == 0
    assert again["mean_reward"] == first["mean_reward"] and again["per_response"] == first["per_response"]

    # A second policy: only its responses no run has scored are scored.
    second = _score([run_b], tiny_rms, cache, tmp_path / "b.json", capsys)
    # (Two users may share a test prompt, drawn with replacement: identical responses are scored once.)
    new = len({r["question"] for r in second["per_response"]
               if int(re.search(r"Question (\d+)", r["question"]).group(1)) % 2})
    assert 0 < new < 6
    assert second["scored_fresh"]["gemma_2b"] == new and sum(second["scored_fresh"].values()) == 2 * new


def test_score_command_mistakes_are_one_line(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        (["personalllm", "score", str(tmp_path / "nowhere")], "does not exist"),
        (["personalllm", "score", str(empty)], "no samples_personalllm_gen_"),
        (["personalllm", "score", str(tmp_path), "--rm", "gemma2b=pretrained=/x"], "unknown reward model"),
    ]
    bad = tmp_path / "samples_personalllm_gen_2026.jsonl"
    bad.write_text(json.dumps({"doc": {"pair_key": "x"}, "resps": [["hi"]]}) + "\n")
    cases.append((["personalllm", "score", str(bad)], "is not a personalllm_gen sample"))
    for argv, words in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and "\n" not in err, err

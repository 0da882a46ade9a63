"""PersonalLLM, Best-of-N and bring-your-own tasks end to end through ``prb eval``:
judges through ``prb-judge`` against the local fake server, scalar RMs through
``prb-rm`` baselines, and ``prb data validate`` on each family."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prb_tasks.data.custom.reader import read_users
from prb_tasks.data.custom.sources import example_path
from prb_tasks.documents import custom, personalllm
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.scorers.lexical import BM25ProfileScorer
from prb_tasks.scoring.bestofn import METRICS, process_bon_scalar
from prb_tasks.scoring.breakdowns import group_means, mean_over_users, tag_items
from prb_tasks.testing.fake_server import Message
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.runner import metric, read_results, run_cli, run_fake_judge, sent_prompt

OPTIONS = {"n_users": 6, "items_per_user": 2, "k": 2}
RIGHT_USERS = {"kenji", "sam"}  # the fake judge gets only these example users right


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_personalllm(tmp_path_factory.mktemp("pllm"), fixture_rows(30, seed=11))


def metadata(copy_dir: Path) -> str:
    return json.dumps({"data_dir": str(copy_dir), **OPTIONS})


def replies(copy_dir: Path) -> dict[str, str]:
    """What the fake judge answers to each prompt the tasks will send."""
    answers: dict[str, str] = {}
    for d in personalllm.build_docs("judge", data_dir=str(copy_dir), **OPTIONS):
        answers[d["prompt"].strip()] = f"Fits their earlier choices.\nResult: {d['chosen_position']}"
    for d in custom.build_docs("judge", source="example", k=OPTIONS["k"]):
        right = d["user_id"] in RIGHT_USERS
        letter = d["chosen_position"] if right else {"A": "B", "B": "A"}[d["chosen_position"]]
        answers[d["prompt"].strip()] = f"My guess.\nResult: {letter}"
    for d in personalllm.build_docs("bon_judge", data_dir=str(copy_dir), **OPTIONS):
        rank = sorted(d["user_rewards"]).index(d["user_rewards"][d["response_index"]])
        answers[d["prompt"].strip()] = f"Rated against their taste.\nScore: {rank + 1}"
    return answers


def samples_of(out: Path, task: str) -> list[dict]:
    """Logged samples of exactly ``task`` (``samples_personalllm_*`` also matches other tasks)."""
    files = [p for p in out.rglob(f"samples_{task}_*.jsonl") if p.name[len(task) + 9:][:1].isdigit()]
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.slow
def test_judges_through_prb_judge_and_the_fake_server(tmp_path: Path, copy_dir: Path) -> None:
    answers = replies(copy_dir)
    unknown: list[str] = []

    def policy(messages: list[Message], model: str) -> str:
        text = messages[-1]["content"].strip()
        if text not in answers:
            unknown.append(text[:80])
            return "no idea"
        return answers[text]

    tasks = "personalllm,personalized_custom_example,personalllm_bon_judge"
    proc, out, sent = run_fake_judge(policy, tasks, metadata(copy_dir), tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not unknown, unknown[:3]
    assert sent == 6 * 2 * 2 + 20 * 2 + 6 * 2 * 8
    results = read_results(out)

    # PersonalLLM: a judge that always agrees with the simulated user.
    for name, value in {"acc": 1.0, "acc_user": 1.0, "acc_pair": 1.0, "consistency": 1.0,
                        "pos_a_rate": 0.5, "parse_fail": 0.0}.items():
        assert metric(results, "personalllm", name) == value, name
    samples = samples_of(out, "personalllm")
    assert len(samples) == 24 and {s["doc"]["user_id"] for s in samples} == {f"user000{i}" for i in range(6)}

    # Bring-your-own: right for two of six users only.
    docs = custom.build_docs("judge", source="example", k=OPTIONS["k"])
    correct = [(d["user_id"], int(d["user_id"] in RIGHT_USERS)) for d in docs]
    assert metric(results, "personalized_custom_example", "acc") == pytest.approx(6 / 20)
    assert metric(results, "personalized_custom_example", "acc_user") == pytest.approx(2 / 6)
    assert metric(results, "personalized_custom_example", "acc_user") == pytest.approx(mean_over_users(correct))
    tags = group_means(tag_items([(d["tags"], int(d["user_id"] in RIGHT_USERS)) for d in docs]))
    assert metric(results, "personalized_custom_example", "acc_tag") == pytest.approx(
        sum(tags.values()) / len(tags))
    assert metric(results, "personalized_custom_example", "consistency") == 1.0
    first = samples_of(out, "personalized_custom_example")[0]
    logged = first["doc"]
    for field in ("pair_key", "subset", "user_id", "tags", "variant", "chosen_position", "words_chosen",
                  "words_rejected", "system_prompt", "prompt_key"):
        assert field in logged, field
    # The prompt is logged once: in the request as sent, not again in the document.
    assert "prompt" not in logged and sent_prompt(first) == docs[first["doc_id"]]["prompt"]

    # Best-of-N with an oracle judge: the user's best response is always picked.
    for n in (2, 4, 8):
        assert metric(results, "personalllm_bon_judge", f"bon_regret_n{n}") == 0.0
        assert metric(results, "personalllm_bon_judge", f"bon_win_random_n{n}") > 0.5
    assert metric(results, "personalllm_bon_judge", "parse_fail") == 0.0
    assert "bon_regret_nN" in proc.stdout and "acc_tag:" in proc.stdout


@pytest.mark.slow
def test_scalar_tasks_through_prb_rm_baselines(tmp_path: Path, copy_dir: Path) -> None:
    out = tmp_path / "bm25"
    pairs = "personalllm_scalar,personalllm_scalar_history,personalized_custom_example_scalar_history"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=bm25", "--tasks", pairs,
                    "--metadata", metadata(copy_dir), "--output_path", str(out), "--log_samples"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(out)
    scorer = BM25ProfileScorer()
    for task, docs in (("personalllm_scalar", personalllm.build_docs("scalar", data_dir=str(copy_dir), **OPTIONS)),
                       ("personalized_custom_example_scalar_history",
                        custom.build_docs("scalar_history", source="example", k=OPTIONS["k"]))):
        outcomes = []
        for d in docs:
            chosen, rejected = scorer.score([RMInput(d["prompt"], c, d["profile_key"], d["question"])
                                             for c in d["choices"]])
            outcomes.append((d["user_id"], int(chosen > rejected)))
        assert metric(results, task, "acc") == pytest.approx(sum(v for _, v in outcomes) / len(outcomes))
        assert metric(results, task, "acc_user") == pytest.approx(mean_over_users(outcomes))
    assert "acc_user:" in proc.stdout
    assert re.search(r"prb-rm \(bm25\): \d+ responses \(\d+ pairs\) in [\d.]+ s, [\d.]+ pairs/s", proc.stderr)
    # Every family says what it read, under the table and in the results file.
    assert f"Data: local folder {copy_dir}: test " in proc.stdout
    assert "Data: bundled SYNTHETIC sample" in proc.stdout
    sources = results["prb"]["data_sources"]
    assert sources["personalllm_scalar"]["kind"] == "local" \
        and sources["personalllm_scalar"]["location"] == str(copy_dir)
    assert sources["personalized_custom_example_scalar_history"]["kind"] == "sample"
    assert sources["personalized_custom_example_scalar_history"]["rows"] == sum(
        len(u.preferences) for u in read_users(example_path()))

    out = tmp_path / "length"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalllm_bon,personalllm_bon_history", "--metadata", metadata(copy_dir),
                    "--output_path", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(out)
    docs = personalllm.build_docs("bon", data_dir=str(copy_dir), **OPTIONS)
    expected: dict[str, float] = {}
    for d in docs:
        for name, value in process_bon_scalar(d, [float(len(c.strip())) for c in d["choices"]]).items():
            expected[name] = expected.get(name, 0.0) + value / len(docs)
    for name in METRICS:
        assert metric(results, "personalllm_bon", name) == pytest.approx(expected[name]), name
        # The length baseline ignores the history, so both variants agree.
        assert metric(results, "personalllm_bon_history", name) == pytest.approx(expected[name]), name
    assert "bon_reward_nN" in proc.stdout and "acc_pair" not in proc.stdout
    # A best-of-N group is eight responses, not four pairs: the closing line counts documents.
    groups = 2 * len(docs)
    assert f"{8 * groups} responses ({groups} documents)" in proc.stderr and "pairs/s" not in proc.stderr


def test_user_mistakes_are_one_line(tmp_path: Path, copy_dir: Path) -> None:
    cases: list[tuple[list[str], str]] = [
        (["--tasks", "personalized_custom_scalar"], "read your preference file from the metadata key data_path"),
        (["--tasks", "personalllm_scalar", "--metadata", json.dumps({"data_dir": str(tmp_path / "nope")})],
         "is not a folder"),
        (["--tasks", "personalllm_scalar", "--metadata", json.dumps({"data_dir": str(copy_dir), "alpha": 0})],
         "--metadata 'alpha'"),
    ]
    for args, expected in cases:
        proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", *args], cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr[-2000:]
        last = proc.stderr.strip().splitlines()[-1]
        assert expected in last and "Traceback" not in proc.stderr, proc.stderr[-2000:]


def test_prb_data_validate_each_family(tmp_path: Path, copy_dir: Path) -> None:
    proc = run_cli(["data", "validate", str(copy_dir)], cwd=tmp_path)
    assert proc.returncode == 0 and "anthropic_hh" in proc.stdout and "total" in proc.stdout
    assert "published test split has 1000" in proc.stdout
    proc = run_cli(["data", "validate", str(example_path())], cwd=tmp_path)
    assert proc.returncode == 0 and "users: 6" in proc.stdout and "preferences: 20" in proc.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"user_id": "x", "preferences": [{"prompt": "p"}]}) + "\n")
    proc = run_cli(["data", "validate", str(bad)], cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.count("\n") == 1 and "preferences[0]" in proc.stdout
    proc = run_cli(["data", "validate", str(tmp_path), "--family", "personalllm"], cwd=tmp_path)
    assert proc.returncode == 1 and "no folder" in proc.stdout

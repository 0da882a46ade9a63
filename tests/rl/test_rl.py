"""``prb rl`` (issue 37): presets, prompts, the reward function, the downstream run that
``prb validity`` reads, bad input in one line, and (slow) the whole loop offline with resume."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from prb_tasks.cli import main
from prb_tasks.common.errors import PRBError
from prb_tasks.common.install_hint import pip_install
from prb_tasks.rl.presets import DIFFERENCES, PRESETS, get_preset
from prb_tasks.rl.prompts import build_prompts, held_out, split


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# ----------------------------------------------------------------------------- presets


def test_paper_preset_holds_the_authors_settings():
    paper = PRESETS["paper"]
    # PPO/verl.sh, PPO/reward_function.py, PPO/prepare_data.py, PPO/infer.py at a5c6814.
    assert paper.learning_rate == 5e-7 and paper.temperature == 1.0 and paper.top_p == 1.0
    assert paper.prompts_per_rollout == 128 and paper.prompts_per_update == 16 and paper.micro_batch == 4
    assert paper.beta == 0.0 and paper.epochs == 1.0 and paper.max_steps is None
    assert paper.reward_scale == 0.1 and paper.reward_on_error == 0.5
    assert paper.train_k == 10 and paper.test_k == 5 and paper.max_new_tokens == 512
    assert (paper.test_temperature, paper.test_top_p, paper.test_max_new_tokens) == (1.0, 0.9, 512)
    # 16 prompts x 2 completions per update in micro-batches of 4; 128 x 2 per rollout batch.
    assert paper.accumulation == 8 and paper.steps_per_generation == 64
    assert paper.bon_preset == "official"
    assert any("critic lr" in name for name, _, _ in DIFFERENCES)


def test_preset_typo_and_bad_override_are_one_line():
    with pytest.raises(PRBError, match="unknown preset 'papr'.*did you mean 'paper'"):
        get_preset("papr")
    with pytest.raises(PRBError, match="at least 2"):
        get_preset("smoke", num_generations=1)
    assert get_preset("smoke", max_steps=3).max_steps == 3


def test_cli_typo_in_preset_exits_2_with_one_line(capsys, tmp_path):
    status = main(["rl", "--policy", "x/y", "--rm", "scorer=length", "--grader", "model=openai/g",
                   "--out", str(tmp_path), "--preset", "smokee"])
    assert status == 2
    assert "did you mean 'smoke'" in _one_line(capsys)


def test_cli_missing_policy_folder_exits_2(capsys, tmp_path):
    status = main(["rl", "--policy", str(tmp_path / "nope"), "--rm", "scorer=length", "--grader", "model=openai/g",
                   "--out", str(tmp_path / "out"), "--data-dir", "sample"])
    assert status == 2
    assert "--policy" in _one_line(capsys)


# ----------------------------------------------------------------------------- prompts


def test_split_is_stable_and_partitions():
    keys = [f"art/{i}" for i in range(200)]
    test = [k for k in keys if held_out(k, 0.2)]
    assert 20 < len(test) < 60
    assert test == [k for k in keys if held_out(k, 0.2)]


def test_prompts_are_the_bon_policy_prompts_and_rm_sees_posts_and_question():
    prompts = build_prompts(2, "prb", "sample")
    assert len(prompts) == 36 and prompts[0].pair_key == "art/0"
    train, test = split(prompts, 0.3)
    assert len(train) + len(test) == 36 and not {p.pair_key for p in train} & {p.pair_key for p in test}
    first = prompts[0]
    assert first.messages[-1][0] == "user" and "Post 1" in first.messages[-1][1]
    assert "Post 1" in first.rm_prompt and "Post 3" not in first.rm_prompt


def test_official_prompts_without_templates_is_one_line():
    with pytest.raises(PRBError, match="prb templates official"):
        build_prompts(10, "official", "sample")


# ----------------------------------------------------------------------------- reward


def test_reward_scores_conversational_completions_scaled():
    from prb_tasks.rl.reward import RMReward, load_rm

    reward = RMReward(load_rm("scorer=length"), scale=0.1, on_error=0.5)
    got = reward(["p", "p"], [[{"role": "assistant", "content": "abcd"}], "ab"], rm_prompt=["q", "q"],
                 profile_key=["k", "k"])
    assert got == pytest.approx([0.4, 0.2])
    assert reward.__name__ == "prb_rm_length"


def test_reward_that_fails_gets_the_error_value_and_is_counted(capsys):
    from prb_tasks.rl.reward import RMReward, load_rm

    # bm25 needs the profile behind profile_key; an unknown key fails scoring.
    reward = RMReward(load_rm("scorer=bm25"), scale=0.1, on_error=0.5)
    assert reward(["p"], ["an answer"], rm_prompt=["q"], profile_key=["no-such-profile"]) == [0.5]
    assert reward.failures == 1
    assert "reward 0.5 each" in capsys.readouterr().err


def test_rm_typo_is_one_line():
    from prb_tasks.rl.reward import load_rm

    with pytest.raises(PRBError, match="did not load") as info:
        load_rm("scorr=length")
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------- downstream run


def test_downstream_run_is_read_by_validity_as_best_of_n(tmp_path):
    from prb_tasks.report.validity import read_downstream
    from prb_tasks.rl.downstream import TASK, write_run

    grades = {("art/1", "a"): 1.0, ("art/1", "aa"): 2.0, ("art/2", "b"): 0.5, ("art/2", "bb"): None}
    path = write_run(tmp_path / "run", "scorer=length", "pol", {"art/1": "a", "art/2": "b"},
                     {"art/1": "aa", "art/2": "bb"}, lambda k, t: grades[(k, t)], get_preset("smoke"), 0)
    data = json.loads(path.read_text())
    assert data["config"] == {"model": "prb-rm", "model_args": "scorer=length"}
    assert data["results"][TASK]["bon_gain,none"] == pytest.approx(1.0)
    assert data["results"][TASK]["ungraded,none"] == pytest.approx(0.5)
    notes: list[str] = []
    sides = read_downstream(path, notes)
    side = sides[TASK]
    assert side.sums == {"art/1": 1.0} and side.offered == 2 and not notes


@pytest.mark.slow  # a prb eval of a tiny RM: 30 s at a load average of 9
def test_rl_run_pairs_with_the_benchmark_run_of_the_same_model_args(tmp_path, capsys):
    """prb validity pairs runs by model and result-changing arguments: the RL run of
    ``--rm pretrained=RM,protocol=official`` meets the benchmark run of that same model_args,
    while a plain ``--rm pretrained=RM`` run does not (docs/rl-downstream.md's recipe gives
    --rm the benchmark's model_args for this reason)."""
    pytest.importorskip("transformers")
    from prb_tasks.report.validity import load_models
    from prb_tasks.rl.downstream import TASK, write_run
    from prb_tasks.testing.tiny_rm import TINY_CHAT_TEMPLATE, build_tiny_rm

    rm = build_tiny_rm(tmp_path / "rm", chat_template=TINY_CHAT_TEMPLATE)
    official = f"pretrained={rm},protocol=official"
    assert main(["eval", "--model", "prb-rm", "--model_args", official, "--tasks", "personalized_rb_sample_scalar",
                 "--output_path", str(tmp_path / "bench"), "--log_samples"]) == 0
    capsys.readouterr()
    grades = {"a": 1.0, "aa": 2.0, "b": 0.0, "bb": 1.0}
    for name, rm_args in (("official", official), ("plain", f"pretrained={rm}")):
        write_run(tmp_path / "rl" / name, rm_args, "pol", {"art/1": "a", "art/2": "b"},
                  {"art/1": "aa", "art/2": "bb"}, lambda k, t: grades[t], get_preset("smoke"), 0)
    notes: list[str] = []
    models, bench, down = load_models([tmp_path / "bench", tmp_path / "rl"], None, [TASK], notes)
    paired = [m for m in models if m.benchmark is not None and m.downstream is not None]
    assert [m.label for m in paired] == [f"prb-rm (pretrained={rm}, protocol=official)"], (models, notes)
    assert paired[0].downstream.sums == {"art/1": 1.0, "art/2": 1.0}
    assert any(note.startswith(f"prb-rm (pretrained={rm}): no run of personalized_rb_sample_scalar")
               for note in notes), notes


def test_the_docs_recipe_gives_rl_and_benchmark_the_same_model_args():
    """docs/rl-downstream.md: each --rm of prb rl is the --model_args of a benchmark run."""
    import re
    import shlex

    text = (Path(__file__).resolve().parents[2] / "docs" / "rl-downstream.md").read_text(encoding="utf-8")
    block = text.split("```bash", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    words = shlex.split(block, comments=True)
    variables = dict(re.findall(r"^(\w+)=(\S+)$", block, flags=re.M))
    rms = [variables.get(v.lstrip("$"), v) for k, v in zip(words, words[1:]) if k == "--rm"]
    evals = [v for k, v in zip(words, words[1:]) if k == "--model_args"]
    assert len(rms) == 2 and sorted(rms) == sorted(evals), (rms, evals)


def test_candidates_file_lists_every_policy_and_marks_empty_answers(tmp_path):
    from prb_tasks.data.bon_files import load_candidates
    from prb_tasks.rl.grade import EMPTY, grade_of, write_candidates

    write_candidates(tmp_path / "c.jsonl", {"base": {"art/1": "x", "art/2": ""}, "r": {"art/1": "y", "art/2": "z"}},
                     ["base", "r"])
    sets = load_candidates(str(tmp_path / "c.jsonl")).sets
    assert [s.texts for s in sets] == [("x", "y"), (EMPTY, "z")]
    from prb_tasks.data.bon_files import text_sha

    assert grade_of({("art/2", text_sha(EMPTY)): 0.0}, "art/2", "") == 0.0


# ----------------------------------------------------------------------------- policies


def test_policy_without_chat_template_is_one_line(tmp_path):
    pytest.importorskip("transformers")
    from prb_tasks.rl.policy import load_policy
    from prb_tasks.testing.tiny_policy import build_tiny_policy

    folder = build_tiny_policy(tmp_path / "plain", chat_template=None)
    with pytest.raises(PRBError, match="no chat template") as info:
        load_policy(str(folder))
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_prb_rl_end_to_end_resumes_and_validity_reads_the_runs(tmp_path, monkeypatch, capsys):
    """One seed of the bench_rl setup: the RM that agrees with the grader and one that does not;
    an interruption mid-training resumes from the checkpoint; prb validity reads the runs."""
    pytest.importorskip("trl")
    from prb_tasks.rl import reward as reward_module
    from prb_tasks.testing.fake_server import FakeLLMServer
    from prb_tasks.testing.rl_setup import ConciseRM, concise_grader
    from prb_tasks.testing.tiny_policy import build_tiny_policy

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    policy = build_tiny_policy(tmp_path / "policy", seed=0)
    with ConciseRM() as rm, FakeLLMServer(policy=concise_grader()) as grader:
        good = f"endpoint={rm.url}"
        argv = ["rl", "--policy", str(policy), "--rm", good, "--rm", "scorer=length", "--grader",
                f"model=openai/grader,api_base={grader.openai_base}", "--out", str(tmp_path / "out"),
                "--data-dir", "sample", "--max-steps", "4", "--test-limit", "6"]
        # Ctrl-C during the third reward call (after the checkpoint at step 2).
        original = reward_module.RMReward.__call__
        calls = {"n": 0}

        def interrupting(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt
            return original(self, *args, **kwargs)

        monkeypatch.setattr(reward_module.RMReward, "__call__", interrupting)
        assert main(argv) == 130
        assert "resume" in capsys.readouterr().err
        monkeypatch.setattr(reward_module.RMReward, "__call__", original)
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert "resuming from" in err and "checkpoint-2" in err
        # The Trainer's per-step dicts went to each policy's train_log.jsonl, not the terminal;
        # the first policy's file holds the steps before the interruption and after it.
        assert "{'loss'" not in err and "'reward'" not in err, err
        assert "every step's numbers in" in err and "step 4/4" in err, err
        for folder in (tmp_path / "out" / "policies").iterdir():
            records = [json.loads(line) for line in (folder / "train_log.jsonl").read_text().splitlines()]
            assert sorted(r["step"] for r in records if "loss" in r) == [1, 2, 3, 4], (folder, records)
            assert all(isinstance(r.get("reward"), float) for r in records if "loss" in r), records
        runs = sorted((tmp_path / "out" / "runs").iterdir())
        assert len(runs) == 2
        for run in runs:
            results = json.loads(next(run.glob("results_*.json")).read_text())["results"]["personalized_rb_rl"]
            assert not math.isnan(results["bon_gain,none"]) and results["ungraded,none"] == 0
        # Benchmark runs of the same two RMs, then validity over both sides.
        for args in (good, "scorer=length"):
            assert main(["eval", "--model", "prb-rm", "--model_args", args, "--tasks", "personalized_rb_sample_scalar",
                         "--output_path", str(tmp_path / "bench"), "--log_samples"]) == 0
        capsys.readouterr()
        status = main(["validity", str(tmp_path / "out" / "runs"), str(tmp_path / "bench"),
                       "--downstream", "personalized_rb_rl"])
        out = capsys.readouterr().out
    assert status == 0
    assert "personalized_rb_rl" in out and "scorer=length" in out


def test_grader_with_nothing_readable_is_one_line(tmp_path, monkeypatch, capsys):
    from prb_tasks.cli.evalcmd import run_eval
    from prb_tasks.rl.grade import run_grader, write_candidates
    from prb_tasks.testing.fake_server import FakeLLMServer, garbage

    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    write_candidates(tmp_path / "c.jsonl", {"base": {"art/0": "one", "art/1": "two"}}, ["base"])
    with FakeLLMServer(policy=garbage()) as server, pytest.raises(PRBError) as info:
        run_grader(tmp_path / "c.jsonl", tmp_path / "grade", f"model=openai/g,api_base={server.openai_base}",
                   "prb", "sample", None, run_eval)
    assert "\n" not in str(info.value) and "prb rl:" in str(info.value)


def test_reward_url_scores_with_a_served_rm_over_a_socket():
    from prb_tasks.rl.reward import RMReward, load_rm
    from prb_tasks.testing.rl_setup import ConciseRM

    with ConciseRM() as server:
        reward = RMReward(load_rm("cache=off", reward_url=server.url), scale=1.0, on_error=0.5)
        got = reward(["p", "p"], ["abcd", "ab"], rm_prompt=["q", "q"], profile_key=["k", "k"])
    assert got == pytest.approx([-0.4, -0.2]) and reward.failures == 0


def test_paper_preset_without_templates_is_one_line(capsys, tmp_path):
    status = main(["rl", "--policy", "x/y", "--rm", "scorer=length", "--grader", "model=openai/g",
                   "--out", str(tmp_path), "--preset", "paper"])
    assert status == 2
    assert "--templates" in _one_line(capsys)


def test_without_the_rl_extra_is_one_line(capsys, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "trl" else real(name, *a))
    status = main(["rl", "--policy", str(tmp_path), "--rm", "scorer=length", "--grader", "model=openai/g",
                   "--out", str(tmp_path / "out"), "--data-dir", "sample", "--preset", "smoke"])
    assert status == 2
    assert _one_line(capsys) == f"prb rl needs trl; install the extra: {pip_install('rl')}"


def test_data_errors_name_the_data_dir_flag(capsys, tmp_path, monkeypatch):
    """prb rl takes its data with --data-dir, so the loader's advice names that flag, not
    prb eval's --metadata data_dir; after the command the default wording is back."""
    import prb_tasks.data.hub as hub
    from prb_tasks.data.errors import DataError
    from prb_tasks.data.personalized_rb.sources import load_table
    from prb_tasks.data.personalized_rb.subsets import SUBSETS

    monkeypatch.delenv("PRB_DATA_DIR", raising=False)
    monkeypatch.setattr(hub, "offline_mode", lambda: False)
    monkeypatch.setattr(hub, "unreachable_reason", lambda *a: "connection refused")
    argv = ["rl", "--policy", "x/y", "--rm", "scorer=length", "--grader", "model=openai/g", "--out", str(tmp_path)]
    assert main(argv) == 2
    line = _one_line(capsys)
    assert "pass --data-dir DIR or set PRB_DATA_DIR" in line and "--metadata" not in line, line
    assert main([*argv, "--data-dir", str(tmp_path / "nope")]) == 2
    line = _one_line(capsys)
    assert line.startswith("prb: --data-dir points to") and "drop --data-dir" in line and "metadata" not in line, line
    with pytest.raises(DataError, match=r"""pass --metadata '\{"data_dir": "DIR"\}'"""):
        load_table(SUBSETS[0], None)


def test_step_log_writes_every_step_and_prints_a_few_lines(tmp_path):
    """The Trainer's dicts go to the file (one per step, NaN as null); stderr (not a terminal)
    gets a line every tenth of the steps and the last, never a dict."""
    import io

    pytest.importorskip("transformers")
    from transformers import TrainerState

    from prb_tasks.train.steplog import StepLog

    stream = io.StringIO()
    log = StepLog(tmp_path / "p" / "train_log.jsonl", "scorer=length", stream=stream)
    state = TrainerState(max_steps=20)
    log.on_train_begin(None, state, None)
    for step in range(1, 21):
        state.global_step = step
        log.on_step_end(None, state, None)
        log.on_log(None, state, None, logs={"loss": 0.5 / step, "reward": float(step), "reward_std": float("nan")})
    log.on_log(None, state, None, logs={"train_runtime": 12.0, "train_loss": 0.1})
    log.on_train_end(None, state, None)
    records = [json.loads(line) for line in (tmp_path / "p" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "loss" in r] == list(range(1, 21))
    assert records[0]["reward_std"] is None and records[-1]["train_runtime"] == 12.0
    # One entry per printed line, its wrapped continuations (indented) joined back to it.
    lines = re.sub(r"\n +", " ", stream.getvalue()).splitlines()
    assert len(lines) == 11 and "{" not in stream.getvalue(), lines
    assert lines[0] == "prb rl: scorer=length: step 2/20  loss 0.25  reward 2", lines
    assert lines[-1].startswith("prb rl: scorer=length: trained to step 20 in 12 s; every step's numbers in "), lines

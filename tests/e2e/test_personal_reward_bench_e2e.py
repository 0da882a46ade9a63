"""PersonalRewardBench end to end through ``prb eval`` on a copy in the hub layout: every judge task through
``prb-judge`` against the local fake server, every scalar task through ``prb-rm`` baselines, then
``prb compare`` with the published rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.data.personal_reward_bench.published import write_published
from prb_tasks.documents.personal_reward_bench import build_docs
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.testing.fake_server import Message
from prb_tasks.testing.personal_reward_bench_copy import write_copy
from tests.runner import metric, read_results, run_cli, run_fake_judge

pytestmark = pytest.mark.slow  # whole prb eval runs in subprocesses

JUDGE_TASKS = ("personal_reward_bench_arena", "personal_reward_bench_arena_kcurve",
               "personal_reward_bench_arena_official_synthesizeme", "personal_reward_bench_arena_official_pgenrm")


def _answers(copy: Path) -> dict[str, str]:
    """The fake judge: right on even-numbered users, wrong on odd ones; user 01's P-GenRM replies lack JSON."""
    answers = {}
    for variant in ("judge", "kcurve", "synthesizeme", "pgenrm"):
        for d in build_docs(variant, "arena", data_dir=str(copy)):
            right = int(d["user_id"][-2:]) % 2 == 0
            letter = d["chosen_position"] if right else "AB".replace(d["chosen_position"], "")
            if variant != "pgenrm":
                answers[doc_prompt(d).strip()] = f"Result: {letter}"
                continue
            scores = {"response_1": 9, "response_2": 2} if letter == "A" else {"response_1": 2, "response_2": 9}
            body = json.dumps({"rationale": "r", "better_response": scores})
            bad = d["user_id"].endswith("01")
            answers[doc_prompt(d).strip()] = "I cannot decide." if bad else f"why <JSON_START>{body}<JSON_END>"
    return answers


def test_judges_and_rms_then_compare_with_published(tmp_path: Path) -> None:
    copy = write_copy(tmp_path / "copy", users=3)
    meta = json.dumps({"data_dir": str(copy)})
    answers = _answers(copy)

    def policy(messages: list[Message], model: str) -> str:
        return answers.get(messages[-1]["content"].strip(), "no idea")

    proc, out, sent = run_fake_judge(policy, ",".join(JUDGE_TASKS), meta, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sent == 24 + 6 * 24 + 24 + 12
    results = read_results(out)
    # Users 00, 02, 04 (3 + 3 + 2 test pairs) are judged right, 01 and 03 (3 + 1) wrong.
    for task in JUDGE_TASKS[:3]:
        assert metric(results, task, "acc") == pytest.approx(8 / 12), task
        assert metric(results, task, "acc_user") == pytest.approx(3 / 5), task
    assert metric(results, JUDGE_TASKS[2], "acc_synthesizeme") == pytest.approx(8 / 12)
    pgenrm = JUDGE_TASKS[3]
    assert metric(results, pgenrm, "acc_pgenrm") == pytest.approx(8 / 9)  # user 01's 3 replies dropped
    assert metric(results, pgenrm, "acc") == pytest.approx(8 / 12)
    assert metric(results, pgenrm, "dropped_no_json_markers") == 3
    assert "P-GenRM: 3 of 12 judgments dropped from acc_pgenrm (3 no json markers)" in proc.stderr

    rm = tmp_path / "rm"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=bm25", "--tasks",
                    "personal_reward_bench_*", "--metadata", meta, "--output_path", str(rm), "--log_samples"],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "prb-rm runs 4 of its 15 tasks" in " ".join(proc.stderr.split())  # the judge tasks left out, in one line
    rm_results = read_results(rm)
    assert {t for t in rm_results["results"]} == {f"personal_reward_bench_{h}_{v}" for h in ("arena", "prism")
                                                  for v in ("scalar", "scalar_history")}
    # BM25 against the user's own history tells the answers apart; against no history it ties every pair.
    assert metric(rm_results, "personal_reward_bench_prism_scalar", "tie_rate") == 1.0
    assert metric(rm_results, "personal_reward_bench_prism_scalar_history", "tie_rate") < 1.0

    write_published(tmp_path / "published")
    proc = run_cli(["compare", str(out), str(rm), str(tmp_path / "published"), "--no-charts"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "published (model=P-GenRM-8B, protocol=pgenrm)" in proc.stdout
    assert "on the HF hub" in proc.stdout and "5 users" in proc.stdout

"""The one line ``prb eval`` prints when a task's numbers rest on output the model did not
give (:mod:`prb_tasks.scoring.lacking`), from results rows and end to end against the fake
server replying as SmolLM2-135M does: fluent text without the format a task reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from prb_tasks.scoring.lacking import lacking_lines, task_line
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from tests.runner import read_results, run_cli

if TYPE_CHECKING:
    from prb_tasks.scoring.personalllm_gen import Generated

# What SmolLM2-135M-Instruct wrote when asked to grade against a rubric (llama.cpp, temperature 0).
RAMBLE = ("The response is a good answer to the question. It covers the main points and is well written, "
          "and the user would find it helpful overall.")


def _row(**metrics: float) -> dict[str, float]:
    return {f"{k},none": v for k, v in metrics.items()}


@pytest.mark.parametrize(("row", "n", "expected"), [
    (_row(gold=float("nan"), grade_unparsed=1.0), 48,
     "0 of 48 grades could be read: the grader never wrote `Aspect i: n`"),
    (_row(gold=1.2, grade_unparsed=0.75), 8, "2 of 8 grades could be read: the grader mostly did not write"),
    (_row(bon_gold=float("nan"), ungraded=1.0), 6, "no best-of-k numbers: no question has a readable gold grade"),
    (_row(bon_gold=1.0, ungraded=0.5), 6, "best-of-k rests on 50% of the questions"),
    (_row(bon_gold=1.0, ungraded=0.0, parse_fail=0.75), 8, "2 of 8 replies gave a readable 1-10 rating"),
    (_row(acc=0.1, parse_fail=0.8), 40, "8 of 40 replies named a verdict (`Result: A` or `Result: B`)"),
    (_row(acc=0.1, parse_fail=0.8), None, "20% of the replies named a verdict"),
    (_row(score=0.2, easy_acc=0.1, parse_fail=0.9), 180, "18 of 180 replies ended with a boxed verdict (\\boxed{A>B}"),
    (_row(score=0.25, top1=0.0, parse_fail=1.0), 12, "0 of 12 replies ended with a readable 1-10 rating"),
    (_row(response_words=0.0, empty_response=1.0), 6, "6 of 6 responses are empty"),
    (_row(candidate_words=3.0, empty_candidate=0.5, failed_candidate=0.25), 2,
     "75% of the candidates are empty or failed"),
])
def test_each_kind_of_missing_output_gets_its_line(row: dict, n: int | None, expected: str) -> None:
    line = task_line("t", row, n)
    assert line is not None and line.startswith("prb: t: ") and expected in line and "; try " in line


@pytest.mark.parametrize("row", [
    _row(gold=1.0, grade_unparsed=0.25),
    _row(bon_gold=1.0, ungraded=0.0),
    _row(acc=0.4, parse_fail=0.49),
    _row(response_words=30.0, empty_response=0.0),
    _row(candidate_words=30.0, empty_candidate=0.0, failed_candidate=0.0),
    _row(acc=0.6),
])
def test_numbers_that_stand_get_no_line(row: dict) -> None:
    assert task_line("t", row, 10) is None


def test_groups_count_their_leaves_and_others_tasks_are_left_alone() -> None:
    results = {
        "results": {"grp": _row(acc=0.0, parse_fail=1.0), "grp_a": _row(acc=0.0, parse_fail=1.0),
                    "grp_b": _row(acc=0.0, parse_fail=1.0), "hellaswag": _row(acc=0.0, parse_fail=1.0)},
        "group_subtasks": {"grp": ["grp_a", "grp_b"]},
        "n-samples": {"grp_a": {"effective": 4}, "grp_b": {"effective": 6}},
    }
    assert lacking_lines(results, {"grp", "grp_a", "grp_b"}) == [
        "prb: grp: 0 of 10 replies named a verdict (`Result: A` or `Result: B`); acc counts the others as wrong, "
        "so it measures the format more than the judgment; try a stronger judge, a larger max_tokens, "
        "or a template that ends with the verdict"]


def test_a_group_that_aggregates_only_its_score_reads_its_leaves_shares() -> None:
    """rewardbench2_judge's YAML aggregates score alone: parse_fail is only in its subsets."""
    results = {
        "results": {"rb2j": _row(score=0.208), "rb2j_math": _row(score=0.25, top1=0.0, parse_fail=1.0),
                    "rb2j_ties": _row(score=0.0, parse_fail=0.5)},
        "group_subtasks": {"rb2j": ["rb2j_math", "rb2j_ties"]},
        "n-samples": {"rb2j_math": {"effective": 8}, "rb2j_ties": {"effective": 24}},
    }
    assert lacking_lines(results, set(results["results"])) == [
        "prb: rb2j: 12 of 32 replies ended with a readable 1-10 rating (a whole number, nothing after it); "
        "unrated responses never win a row, so the score measures the format more than the judgment; "
        "try a stronger judge or a larger max_tokens"]


@pytest.mark.slow
def test_a_rating_judge_that_never_rates_gets_its_line(tmp_path: Path) -> None:
    """rewardbench2_judge against the fake server replying with prose and no rating: one line
    under the table (the group row has no parse_fail of its own)."""
    from prb_tasks.testing.benchmark_copies import rewardbench2_rows, write_rewardbench2

    data = write_rewardbench2(tmp_path / "rb2", rewardbench2_rows(2, 2, seed=4))
    with FakeLLMServer(policy=lambda messages, model: RAMBLE) as server:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                        f"model=openai/fake,api_base={server.openai_base},cache_dir={tmp_path / 'cache'}",
                        "--tasks", "rewardbench2_judge", "--metadata", json.dumps({"data_dir": str(data)}),
                        "--output_path", str(tmp_path / "out")],
                       cwd=tmp_path, env={"OPENAI_API_KEY": "sk-fake-lacking"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "prb: rewardbench2_judge: 0 of 64 replies ended with a readable 1-10 rating" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_a_grader_without_aspect_lines_ends_in_one_line_at_each_step(tmp_path: Path) -> None:
    """Grading then a contestant, with a grader that writes prose: each run ends in its line
    (exit 0, numbers NaN), never in a traceback or a best-of-k number."""
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text("".join(json.dumps({"pair_key": f"art/{i}", "candidates": [f"Answer {i}.{j}: read more books."
                                                                                    for j in range(2)]}) + "\n"
                                  for i in range(2)), encoding="utf-8")

    def policy(messages: list[Message], model: str) -> str:
        return RAMBLE

    with FakeLLMServer(policy=policy) as server:
        grade = run_cli(["eval", "--model", "prb-judge", "--model_args",
                         f"model=openai/grader,api_base={server.openai_base},cache_dir={tmp_path / 'cache'}",
                         "--tasks", "personalized_rb_bon_grade",
                         "--metadata", json.dumps({"data_dir": "sample", "candidates": str(candidates)}),
                         "--output_path", str(tmp_path / "grade"), "--log_samples"],
                        cwd=tmp_path, env={"OPENAI_API_KEY": "sk-fake-lacking"})
    assert grade.returncode == 0, grade.stderr[-3000:]
    assert "Traceback" not in grade.stderr
    assert ("prb: personalized_rb_bon_grade: 0 of 4 grades could be read: the grader never wrote `Aspect i: n`"
            in grade.stdout), grade.stdout[-3000:]
    assert read_results(tmp_path / "grade")["results"]["personalized_rb_bon_grade"]["grade_unparsed,none"] == 1.0

    contestant = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length",
                          "--tasks", "personalized_rb_bon",
                          "--metadata", json.dumps({"data_dir": "sample", "candidates": str(candidates),
                                                    "grades": str(tmp_path / "grade")}),
                          "--output_path", str(tmp_path / "length")], cwd=tmp_path)
    assert contestant.returncode == 0, contestant.stderr[-3000:]
    assert "prb: personalized_rb_bon: no best-of-k numbers: no question has a readable gold grade" in contestant.stdout


def _generated(response: str, user: str = "u1") -> "Generated":
    from prb_tasks.scoring.personalllm_gen import Generated

    return Generated(user, "q", response, (0.1,) * 10, False, 0.0, None)


def test_personalllm_score_leaves_failed_generations_out_and_says_so(capsys) -> None:
    from prb_tasks.replies.verdict import ERROR_MARK
    from prb_tasks.scoring.personalllm_gen import usable_generations

    kept = usable_generations(Path("s.jsonl"), [_generated("Boil it six minutes."), _generated(ERROR_MARK)])
    assert [g.response for g in kept] == ["Boil it six minutes."]
    err = capsys.readouterr().err.strip()
    assert err == ("prb personalllm score: s.jsonl: 1 of 2 generations failed (an error or a stopped run) and are "
                   "left out; run the generation again to fill them")


def test_personalllm_score_says_when_it_would_score_silence(capsys) -> None:
    from prb_tasks.common.errors import PRBError
    from prb_tasks.replies.verdict import SKIPPED_MARK
    from prb_tasks.scoring.personalllm_gen import usable_generations

    kept = usable_generations(Path("s.jsonl"), [_generated(""), _generated("  "), _generated("Tea: steep 4 min.")])
    assert len(kept) == 3  # an empty answer is the model's answer: scored, but said
    assert "2 of 3 responses are empty, so the numbers below mostly score silence; try " in capsys.readouterr().err
    with pytest.raises(PRBError) as caught:
        usable_generations(Path("s.jsonl"), [_generated(""), _generated(SKIPPED_MARK)])
    assert str(caught.value) == (
        "prb personalllm score: s.jsonl: none of the 2 generations can be scored (1 failed (an error or a stopped "
        "run) and 1 are empty); try --apply_chat_template, a larger max_gen_toks or another model, and run the "
        "generation again")

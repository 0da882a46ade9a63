"""RM-Bench's matrix from pairwise verdicts (prb_tasks/scoring/rmbench_judge.py): votes per order,
cells won when both orders net above 0, the authors' hard / normal / easy from the cells."""

from __future__ import annotations

import math

import pytest

from prb_tasks.scoring.metrics import pair_consistency, share_of_a
from prb_tasks.scoring.rmbench import accuracy_of_wins, style_accuracy
from prb_tasks.scoring.rmbench_judge import (
    CALLS_PER_PROMPT,
    judge_easy_acc,
    judge_hard_acc,
    judge_normal_acc,
    judge_score,
    process_pair,
    prompt_wins,
)


def _doc(row: str, i: int, j: int, position: str) -> dict:
    return {"row_id": row, "chosen_style": i, "rejected_style": j, "chosen_position": position}


def _reply(preferred: str | None, position: str) -> str:
    """A reply preferring ``chosen``/``rejected``/``tie`` (None: no verdict) when chosen sits at ``position``."""
    if preferred is None:
        return "I cannot decide."
    if preferred == "tie":
        return "Same. \\boxed{A=B}"
    letter = position if preferred == "chosen" else ("B" if position == "A" else "A")
    return f"\\boxed{{{letter}>{'B' if letter == 'A' else 'A'}}}"


def _judge(row: str, plan: dict[tuple[int, int], tuple[str | None, str | None]]) -> list[dict]:
    """Processed documents of one prompt: plan[(i, j)] = (preference with chosen in A, with chosen in B)."""
    out = []
    for i in range(3):
        for j in range(3):
            for position, preferred in zip("AB", plan[(i, j)]):
                out.append(process_pair(_doc(row, i, j, position), [_reply(preferred, position)]))
    return out


def test_votes_become_cells_and_the_authors_matrix() -> None:
    plan = {(i, j): ("chosen", "chosen") for i in range(3) for j in range(3)}
    plan[(0, 1)] = ("chosen", "rejected")  # position bias (always A): nets 0, lost
    plan[(0, 2)] = ("tie", "chosen")  # tie + chosen: won
    plan[(1, 2)] = (None, "chosen")  # no verdict + chosen: won
    plan[(1, 0)] = ("rejected", "rejected")  # lost
    plan[(2, 1)] = ("tie", "tie")  # tie both: lost (as equal scores in the authors' strict >)
    plan[(2, 0)] = ("chosen", None)  # won
    processed = _judge("p1", plan)
    assert len(processed) == CALLS_PER_PROMPT == 18
    items = [p["score"] for p in processed]
    assert prompt_wins(items) == [[[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]]
    assert judge_hard_acc(items) == pytest.approx(2 / 3)
    assert judge_normal_acc(items) == pytest.approx(1.0)
    assert judge_easy_acc(items) == pytest.approx(1 / 3)
    assert judge_score(items) == pytest.approx((2 / 3 + 1 + 1 / 3) / 3)
    # Diagnostics: 9 cells; (0,1) flips, (0,2) tie vs chosen, (1,2) and (2,0) miss a verdict -> 5 of 9 agree.
    assert pair_consistency([p["consistency"] for p in processed]) == pytest.approx(5 / 9)
    assert sum(p["tie_rate"] for p in processed) == 3 and sum(p["parse_fail"] for p in processed) == 2
    letters = [p["pos_a_rate"] for p in processed]
    assert share_of_a(letters) == pytest.approx(letters.count("A") / (18 - 3 - 2))


def test_a_judge_matching_a_scalar_rm_gives_the_rms_matrix() -> None:
    # Wins that a scalar RM's rewards produce, judged consistently, give the same numbers as style_accuracy.
    rewards = [([3.0, 1.0, 2.0], [2.5, 0.5, 1.0]), ([0.0, 4.0, 4.0], [1.0, 4.0, 3.0])]
    items = []
    for n, (chosen, rejected) in enumerate(rewards):
        plan = {(i, j): (("chosen",) * 2 if chosen[i] > rejected[j] else ("rejected", "tie"))
                for i in range(3) for j in range(3)}
        items += [p["score"] for p in _judge(f"p{n}", plan)]
    theirs = style_accuracy(rewards)
    assert judge_score(items) == pytest.approx(theirs.score)
    assert (judge_hard_acc(items), judge_normal_acc(items), judge_easy_acc(items)) == pytest.approx(
        (theirs.hard, theirs.normal, theirs.easy))
    assert accuracy_of_wins(prompt_wins(items)).matrix == pytest.approx(theirs.matrix)


def test_incomplete_prompts_are_left_out_and_errors_vote_nothing() -> None:
    plan = {(i, j): ("chosen", "chosen") for i in range(3) for j in range(3)}
    whole = [p["score"] for p in _judge("p1", plan)]
    cut = [p["score"] for p in _judge("p2", {k: ("rejected", "rejected") for k in plan})][:17]  # --limit
    assert judge_score(whole + cut) == pytest.approx(1.0)
    assert math.isnan(judge_score(cut))
    failed = process_pair(_doc("p3", 0, 0, "A"), ["[prb:error] 500"])
    assert failed["score"][-1] == 0 and failed["error_rate"] == 1 and failed["parse_fail"] == 0

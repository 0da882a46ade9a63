"""Best-of-k on Personalized RewardBench: exact expectations over ties, gains, gold grades."""

from __future__ import annotations

import math

import pytest

from prb_tasks.scoring.bestofk import (
    JUDGE_AGGREGATIONS,
    best_of_k,
    nanmean,
    parse_grade,
    process_bon_judge,
    process_bon_scalar,
    process_grade,
    question_metrics,
)

GOLD = [1.0, 0.5, 2.0, 1.5]


def test_pick_without_ties_is_a_lookup() -> None:
    scores = [0.1, 0.9, 0.3, 0.2]
    assert best_of_k(scores, GOLD, 1).gold == 1.0
    assert best_of_k(scores, GOLD, 2).gold == 0.5  # candidate 1 scores highest, gold 0.5
    pick = best_of_k(scores, GOLD, 4)
    assert (pick.gold, pick.top) == (0.5, 0.0)


def test_ties_give_the_exact_expectation() -> None:
    # Candidates 0, 2 and 3 share the top score: the pick is uniform among them.
    scores = [5.0, 1.0, 5.0, 5.0]
    pick = best_of_k(scores, GOLD, 4)
    assert pick.gold == pytest.approx((1.0 + 2.0 + 1.5) / 3)
    assert pick.top == pytest.approx(1 / 3)  # only candidate 2 is gold-best
    # Among the first two only candidate 0 is top.
    assert best_of_k(scores, GOLD, 2).gold == 1.0
    # An unreadable score ranks below every readable one; all unreadable = uniform.
    assert best_of_k([None, 0.0, None, None], GOLD, 4).gold == 0.5
    assert best_of_k([None] * 4, GOLD, 4).gold == pytest.approx(sum(GOLD) / 4)


def test_question_metrics_gain_over_k1() -> None:
    scores = [0.0, 1.0, 3.0, 3.0]
    out = question_metrics(scores, GOLD)
    assert out["bon_gold_k1"] == 1.0 and out["bon_top_k1"] == 1.0
    assert out["bon_gain_k2"] == pytest.approx(0.5 - 1.0)
    assert out["bon_gold_k4"] == pytest.approx((2.0 + 1.5) / 2)
    assert out["bon_gain_k4"] == pytest.approx(1.75 - 1.0)
    assert out["bon_top_k4"] == pytest.approx(0.5)
    assert (out["bon_gold"], out["bon_gain"], out["bon_top"]) == (out["bon_gold_k4"], out["bon_gain_k4"], 0.5)
    # k above N is NaN (left out of means), and the question counts as graded.
    assert math.isnan(out["bon_gold_k8"]) and out["ungraded"] == 0.0


def test_ungraded_candidate_leaves_the_question_out() -> None:
    out = question_metrics([1, 2, 3], [1.0, None, 2.0])
    assert out["ungraded"] == 1.0
    assert math.isnan(out["bon_gain"]) and math.isnan(out["bon_gold_k1"])
    assert nanmean([out["bon_gain"], 0.5, 1.5]) == 1.0


def test_scalar_and_judge_paths_agree() -> None:
    doc = {"pair_key": "art/0", "gold": GOLD}
    rewards = [(0.2, False), (0.1, False), (0.7, False), (0.7, False)]
    scalar = process_bon_scalar(doc, rewards)
    ratings = ["Score: 3", "Score: 2", "Score: 8", "8/10"]
    entries = [process_bon_judge({**doc, "candidate": i}, [text]) for i, text in enumerate(ratings)]
    for metric in ("bon_gold_k4", "bon_gain_k2", "bon_gain", "bon_top"):
        assert JUDGE_AGGREGATIONS[f"judge_{metric}"]([e[metric] for e in entries]) == pytest.approx(scalar[metric])
    # A question missing a candidate (cut by --limit) is left out.
    assert math.isnan(JUDGE_AGGREGATIONS["judge_bon_gain"]([e["bon_gain"] for e in entries[:3]]))


def test_grade_parsing() -> None:
    reading = parse_grade("Aspect 1: 2\nAspect 2: 1\n**Aspect 3:** 0", 3)
    assert reading.outcome == "verdict" and reading.value == pytest.approx(1.0)
    assert reading.per_aspect == (2, 1, 0)
    # Restated grades: the last wins.
    assert parse_grade("Aspect 1: 0\nAspect 1 = 2", 1).value == 2.0
    assert parse_grade("<think>Aspect 1: 0</think>Aspect 1: 1", 1).value == 1.0
    for bad in ("Aspect 1: 2", "Aspect 1: 3\nAspect 2: 1", "great answer", ""):
        assert parse_grade(bad, 2).outcome == "unparsed", bad
    out = process_grade({"aspects": 2}, ["Aspect 1: 2"])
    assert math.isnan(out["gold"]) and out["grade_unparsed"] == 1.0
    assert process_grade({"aspects": 2}, ["Aspect 1: 2\nAspect 2: 2"])["gold"] == 2.0

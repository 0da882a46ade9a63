"""Best-of-N metrics on constructed cases with known answers, and pointwise score parsing."""

from __future__ import annotations

import itertools
import random

import pytest

from prb_tasks.replies.pointwise import parse_score
from prb_tasks.replies.verdict import ERROR_MARK
from prb_tasks.scoring.bestofn import (
    METRICS,
    bon_outcome,
    judge_bon_regret_n4,
    judge_bon_reward_n2,
    judge_bon_reward_n8,
    judge_bon_win_random_n8,
    process_bon_judge,
    process_bon_scalar,
    top_indices,
)

USER = [0.3, -1.2, 2.0, 0.7, -0.4, 1.1, -2.5, 0.0]
POPULAR = [1.5, 0.2, -0.3, 0.9, 0.1, -1.0, 0.4, 0.0]


def doc() -> dict:
    return {"user_rewards": USER, "popular_rewards": POPULAR, "choices": [f"r{i}" for i in range(8)]}


def test_an_oracle_has_no_regret() -> None:
    for n in (2, 4, 8):
        out = bon_outcome(USER, USER, POPULAR, n)
        assert out.regret == 0.0 and out.reward == max(USER[:n])
        # The best of n distinct rewards beats the n - 1 others and ties itself.
        assert out.win_random == pytest.approx((n - 0.5) / n)
    metrics = process_bon_scalar(doc(), [(r, False) for r in USER])
    assert set(metrics) == set(METRICS)
    assert metrics["bon_regret_n2"] == metrics["bon_regret_n4"] == metrics["bon_regret_n8"] == 0.0
    assert metrics["bon_reward_n8"] == 2.0 and metrics["bon_reward_n2"] == 0.3


def test_a_random_rm_wins_half_the_time_against_random_in_expectation() -> None:
    # Every ordering of distinct scores is equally likely for a random RM: averaged over
    # all of them the win rate against a random pick is exactly one half.
    for n in (2, 4):
        rates = [bon_outcome(list(order) + [0.0] * (8 - n), USER, POPULAR, n).win_random
                 for order in itertools.permutations(range(n))]
        assert sum(rates) / len(rates) == pytest.approx(0.5, abs=1e-12)
    # A model that cannot tell responses apart picks uniformly: exactly one half, and
    # its reward is the plain mean.
    flat = bon_outcome([1.0] * 8, USER, POPULAR, 8)
    assert flat.win_random == 0.5 and flat.reward == pytest.approx(sum(USER) / 8)
    # And by simulation, with random scores.
    rng = random.Random(0)
    draws = [bon_outcome([rng.random() for _ in range(8)], USER, POPULAR, 8).win_random for _ in range(20000)]
    assert sum(draws) / len(draws) == pytest.approx(0.5, abs=0.01)


def test_worst_pick_popular_pick_and_ties() -> None:
    worst = bon_outcome([-r for r in USER], USER, POPULAR, 8)
    assert worst.reward == -2.5 and worst.regret == 4.5 and worst.win_random == pytest.approx(0.5 / 8)
    # Picking what the population-average user picks ties with it.
    same = bon_outcome(POPULAR, USER, POPULAR, 8)
    assert same.win_popular == 0.5 and same.reward == USER[0]
    # N = 4: the population favourite among the first four is response 0 (reward 0.3);
    # the user's favourite is response 2 (reward 2.0).
    assert bon_outcome(USER, USER, POPULAR, 4).win_popular == 1.0
    # Two responses share the top score: the pick is either, with equal chance.
    tied = bon_outcome([5, 5, 0, 0, 0, 0, 0, 0], USER, POPULAR, 4)
    assert tied.reward == pytest.approx((0.3 - 1.2) / 2)
    assert tied.regret == pytest.approx(2.0 - (0.3 - 1.2) / 2)
    assert top_indices([None, 2.0, None, 2.0]) == [1, 3] and top_indices([None, None]) == [0, 1]
    with pytest.raises(ValueError):
        bon_outcome([1.0, 2.0], USER, POPULAR, 4)


def _judge_items(scores_by_group: dict[str, list]) -> list[tuple]:
    items = []
    for key, scores in scores_by_group.items():
        for index, score in enumerate(scores):
            reply = "Fits well.\nScore: " + str(score) if score is not None else "I am not sure."
            d = {"group_key": key, "response_index": index, "user_rewards": USER, "popular_rewards": POPULAR}
            out = process_bon_judge(d, [reply])
            assert out["parse_fail"] == int(score is None)
            items.append(out["bon_reward_n8"])
    return items


def test_judge_ratings_are_reassembled_per_group() -> None:
    ranks = {r: i for i, r in enumerate(sorted(USER))}
    oracle = [1 + ranks[r] for r in USER]  # 1..8, highest for the user's best
    items = _judge_items({"u1/p1": oracle, "u2/p7": [None] * 8})
    # Group u1 is the oracle (reward 2.0); u2 has no readable rating: a uniform pick.
    assert judge_bon_reward_n8(items) == pytest.approx((2.0 + sum(USER) / 8) / 2)
    assert judge_bon_win_random_n8(items) == pytest.approx(((8 - 0.5) / 8 + 0.5) / 2)
    # An unreadable rating ranks below every readable one.
    assert judge_bon_reward_n2(_judge_items({"g": [None, 3] + [1] * 6})) == USER[1]
    # A group missing one of its first N responses (e.g. --limit) is left out of that N.
    partial = [i for i in _judge_items({"a": oracle, "b": oracle}) if not (i[0] == "b" and i[1] == 7)]
    assert judge_bon_reward_n8(partial) == 2.0 and judge_bon_regret_n4(partial) == 0.0
    assert judge_bon_reward_n8([]) != judge_bon_reward_n8([])  # NaN when nothing is complete


@pytest.mark.parametrize(("text", "value"), [
    ("Good fit.\nScore: 7", 7.0),
    ("**Score:** 8/10", 8.0),
    ("Rating = 6.5", 6.5),
    ("Final score: 3\n", 3.0),
    ("9/10", 9.0),
    ("10", 10.0),
    ("Score: 2. On reflection... Score: 9", 9.0),
    ("<think>Score: 1</think>Score: 6", 6.0),
])
def test_scores_are_read(text: str, value: float) -> None:
    reading = parse_score(text)
    assert reading.outcome == "verdict" and reading.value == value


@pytest.mark.parametrize("text", ["Score: 0", "Score: 11", "I like it", "", "Result: A", "<think>Score: 5"])
def test_unreadable_scores(text: str) -> None:
    assert parse_score(text).outcome == "unparsed" and parse_score(text).value is None


def test_backend_markers() -> None:
    assert parse_score(ERROR_MARK + " Timeout").outcome == "error"
    assert parse_score(None).outcome == "unparsed"

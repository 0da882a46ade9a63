"""RewardBench 2 from a judge's 1-10 ratings (prb_tasks/scoring/rewardbench2_ratings.py) against a
transcription of allenai's run_generative_v2.py / generative_v2.py behaviour (reward-bench @05a9005)."""

from __future__ import annotations

import random
import re

import pytest

from prb_tasks.replies.ratings import UNRATED, parse_rating
from prb_tasks.replies.verdict import ERROR_MARK
from prb_tasks.scoring.rewardbench2_ratings import best_of_n_from_ratings


def _theirs_parse(raw: str) -> int:
    # get_single_rating: a trailing integer 1-10 of the stripped reply, else -1 (also for "" and "$ERROR$").
    rating = -1
    if raw and raw != "$ERROR$":
        m = re.search(r"\b([1-9]|10)\b\s*$", raw.strip())
        if m and 1 <= int(m.group(1)) <= 10:
            rating = int(m.group(1))
    return rating


def _theirs_row(ratings: list[int]) -> float:
    # run_judge_ratings_multi + get_judgement: winners among valid ratings; all invalid -> 0.25.
    valid = [r for r in ratings if r != -1]
    if not valid:
        return 0.25
    winners = [i for i, r in enumerate(ratings) if r == max(valid)]
    return (0 in winners) / len(winners)


MESSY = [
    "The response is accurate and helpful.\n\n9", "Rating: 10", "Rating: 10.", "**8**", "8/10", "7 \n\n",
    "  I would rate it 3\n", "Score: 0", "11", "x10", "3.5", "<think>maybe 2</think> Final: 6",
    "<think>reasoning ending in 4</think>", "The answer is wrong. 1", "10\n10", "rating:\n 5  ", "five", "",
    "Overall 6/10. Good.", "1O", "rating 7)", "٣", "It deserves a 4\t", "Grade: 9 out of 10",
]


@pytest.mark.parametrize("reply", MESSY)
def test_parse_matches_theirs_on_messy_replies(reply: str) -> None:
    assert parse_rating(reply) == _theirs_parse(reply)


def test_parse_matches_theirs_on_random_tails() -> None:
    rng = random.Random(0)
    alphabet = "0123456789 .\n/*x:)"
    for _ in range(3000):
        reply = "Explanation. " + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        assert parse_rating(reply) == _theirs_parse(reply), reply


def test_known_readings_and_backend_markers() -> None:
    assert [parse_rating(r) for r in ("fine\n9", "8/10", "Rating: 10.", "**8**", "0")] == [9, 10, -1, -1, -1]
    assert parse_rating(f"{ERROR_MARK} timeout 7") == UNRATED
    assert parse_rating(None) == UNRATED


@pytest.mark.parametrize("seed", range(5))
def test_row_scores_match_theirs(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        ratings = [rng.choice([-1, 1, 5, 7, 9, 10]) for _ in range(rng.choice([4, 4, 5]))]
        assert best_of_n_from_ratings(ratings) == _theirs_row(ratings)
    assert best_of_n_from_ratings([9, 9, 3, -1]) == 0.5
    assert best_of_n_from_ratings([-1, -1, -1, -1]) == 0.25
    assert best_of_n_from_ratings([-1, 2, -1, -1]) == 0.0

"""RewardBench 2 scored from a generative judge's ratings, by the rules of allenai's
``scripts/run_generative_v2.py`` and ``rewardbench/generative_v2.py`` (allenai/reward-bench
at 05a9005), the path that rates each response on its own (``--score_w_ratings``; their
Ties subset is always scored this way). Every rule below is theirs:

- the judge sees the prompt and *one* response and ends its reply with a rating from 1 to
  10; Ties responses get a variant of the instructions that asks it to ignore depth and
  detail (correctness only);
- the rating is read from the reply (whitespace at both ends removed) by one pattern: an
  integer 1-10 standing alone as a word at the very end (``\\b([1-9]|10)\\b\\s*$``).
  Anything else (no such number, a trailing full stop or markdown, ``0``, ``11``, an empty
  reply, an API error) is *unrated*, their ``-1``. No reasoning block is removed first, and
  ``8/10`` reads as 10, as theirs does;
- a best-of-N row (every subset but Ties): among the rated responses, those sharing the top
  rating win; the row scores ``1 / k`` when the correct response is one of the ``k``
  winners, else 0; a row with no rated response scores 0.25 ("effectively a tie");
- a Ties row: its ratings go to the same Ties score as a scalar RM's rewards
  (:func:`prb_tasks.scoring.rewardbench2.ties_score`), an unrated response keeping ``-1``
  (so it ranks below every rated one);
- nothing is excluded: all six subsets are scored, the aggregate is the plain mean of the six.

Their other generative path (four responses in one prompt, a ``[[A]]``-``[[D]]`` verdict)
shuffles the correct answer into a random position; prb does not reproduce that path.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from prb_tasks.replies.ratings import UNRATED, parse_rating
from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK
from prb_tasks.scoring.rewardbench2 import ties_score

#: What a best-of-N row scores when no response was rated.
ALL_UNRATED_SCORE = 0.25


def best_of_n_from_ratings(ratings: Sequence[int]) -> float:
    """One best-of-N row's score from its responses' ratings, the correct response first.

    Args:
        ratings: per response, 1-10 or :data:`UNRATED`.
    """
    rated = [r for r in ratings if r != UNRATED]
    if not rated:
        return ALL_UNRATED_SCORE
    top = max(rated)
    winners = [i for i, r in enumerate(ratings) if r == top]
    return (0 in winners) / len(winners)


def process_rating(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One response's rating, kept with its row; rows are put back together on aggregation."""
    reply = results[0] if results else None
    rating = parse_rating(reply)
    # The row's position in the file goes with its id: rows sharing an id stay apart, as each
    # row is scored on its own in allenai's code.
    entry = (str(doc["row_id"]), int(doc["response_index"]), int(doc["responses"]), int(doc["num_correct"]), rating,
             int(doc["row"]))
    # Ties has no top1 (its score is a property of the subset); every other subset has.
    out: dict[str, Any] = {name: entry for name in (("score",) if doc["subset"] == "Ties" else ("score", "top1"))}
    out["parse_fail"] = int(rating == UNRATED and isinstance(reply, str) and not reply.startswith(
        (ERROR_MARK, SKIPPED_MARK)))
    out["error_rate"] = int(isinstance(reply, str) and reply.startswith(ERROR_MARK))
    return out


def rows_of(items: Iterable[Sequence[Any]]) -> dict[tuple[int, str], tuple[int, list[int]]]:
    """(row position, row id) -> (num_correct, ratings in response order); a row missing a
    response (``--limit``) is left out.

    Args:
        items: :func:`process_rating` entries, ``(row_id, response_index, responses,
            num_correct, rating, row)``.
    """
    got: dict[tuple[int, str], dict[int, int]] = defaultdict(dict)
    shape: dict[tuple[int, str], tuple[int, int]] = {}
    for row_id, index, responses, num_correct, rating, row in items:
        key = (int(row), str(row_id))
        got[key][int(index)] = int(rating)
        shape[key] = (int(responses), int(num_correct))
    return {key: (shape[key][1], [ratings[i] for i in range(shape[key][0])])
            for key, ratings in sorted(got.items()) if len(ratings) == shape[key][0]}


def judge_best_of_n(items: Iterable[Sequence[Any]]) -> float:
    """A best-of-N subset's score: the mean of :func:`best_of_n_from_ratings` over its rows."""
    rows = rows_of(items)
    return float(np.mean([best_of_n_from_ratings(r) for _, r in rows.values()])) if rows else math.nan


def judge_top1(items: Iterable[Sequence[Any]]) -> float:
    """Share of best-of-N rows where the correct response alone has the top rating."""
    rows = rows_of(items)
    return float(np.mean([best_of_n_from_ratings(r) == 1.0 for _, r in rows.values()])) if rows else math.nan


def judge_ties(items: Iterable[Sequence[Any]]) -> float:
    """The Ties score of the ratings (an unrated response counts -1, as theirs)."""
    rows = rows_of(items)
    return ties_score((row_id.split("/")[0], num_correct, [float(r) for r in ratings])
                      for (_, row_id), (num_correct, ratings) in rows.items()).score

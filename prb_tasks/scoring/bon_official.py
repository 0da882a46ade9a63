"""Best-of-N picks and their summary as the Personalized RewardBench authors compute them.

The scoring half of the ``official`` preset (read in their ``BoN/score.py`` and
``BoN/evaluate.py``, commit a5c6814); how a grader's reply becomes a grade under it is
:mod:`prb_tasks.replies.bon_official`, which also says what the preset changes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

#: Their best-of-k sizes (``K_VALUES`` of their score.py and evaluate.py).
OFFICIAL_SIZES = (1, 2, 4, 8, 16, 32, 64, 128)


def first_max(scores: Sequence[float]) -> int:
    """Index of the highest score, the earliest among equals (Python's ``max`` rule).

    Args:
        scores: one reward per candidate, at least one.
    """
    if not scores:
        raise ValueError("first_max needs at least one score")
    best = 0
    for index in range(1, len(scores)):
        if scores[index] > scores[best]:
            best = index
    return best


def picks(scores: Sequence[float], gold: Sequence[float], sizes: Iterable[int] = OFFICIAL_SIZES) -> dict[int, float]:
    """The gold grade of the best-of-k pick for every k (their ``scored[:k]`` slicing).

    Args:
        scores: the contestant's reward of each candidate, in candidate order.
        gold: each candidate's grade.
        sizes: the k values.
    """
    return {k: float(gold[first_max(list(scores[:k]))]) for k in sizes}


def question_metrics(scores: Sequence[float], gold: Sequence[Optional[float]], sizes: Sequence[int],
                     metrics: Sequence[str]) -> dict[str, float]:
    """prb's best-of-k metric names, filled by the official rules for one question.

    ``bon_gold_kK`` is the pick's grade, ``bon_gain_kK`` that minus the first candidate's,
    ``bon_top_kK`` 1 when the pick has the highest grade of the k (else 0); the unsuffixed
    names are k = N.

    Args:
        scores: the contestant's reward of each of the N candidates.
        gold: each candidate's official grade; None (a failed grader request) leaves the
            question out (every metric NaN, ``ungraded`` 1).
        sizes: prb's k values (metrics for a k above N stay NaN).
        metrics: every metric name the task reports.
    """
    out = {name: math.nan for name in metrics}
    if any(g is None for g in gold):
        return {**out, "ungraded": 1.0}
    grades = [float(g) for g in gold]  # type: ignore[arg-type]
    n = len(grades)
    for k in sorted({*(size for size in sizes if size <= n), n}):
        index = first_max(list(scores[:k]))
        values = {"gold": grades[index], "gain": grades[index] - grades[0],
                  "top": float(grades[index] == max(grades[:k]))}
        for field, value in values.items():
            if k in sizes and f"bon_{field}_k{k}" in out:
                out[f"bon_{field}_k{k}"] = value
            if k == n:
                out[f"bon_{field}"] = value
    return {**out, "ungraded": 0.0}


@dataclass(frozen=True)
class KSummary:
    """Their per-k summary line of one subset.

    Attributes:
        k: best-of-k.
        num_examples: questions.
        mean_score: mean grade of the picks.
        std_score: population standard deviation (``np.std``).
        min_score: lowest pick grade.
        max_score: highest pick grade.
    """

    k: int
    num_examples: int
    mean_score: float
    std_score: float
    min_score: float
    max_score: float


def summarize(questions: Iterable[tuple[str, Sequence[float], Sequence[float]]],
              sizes: Sequence[int] = OFFICIAL_SIZES) -> dict[str, list[KSummary]]:
    """Subset -> one line per k, as their evaluation summary (subsets in first-seen order).

    Args:
        questions: per question, its subset, the contestant's rewards and the candidates' grades.
        sizes: the k values.
    """
    grades: dict[str, dict[int, list[float]]] = {}
    for subset, scores, gold in questions:
        for k, value in picks(scores, gold, sizes).items():
            grades.setdefault(subset, {}).setdefault(k, []).append(value)
    return {
        subset: [KSummary(k, len(values), float(np.mean(values)), float(np.std(values)), float(np.min(values)),
                          float(np.max(values))) for k, values in sorted(by_k.items())]
        for subset, by_k in grades.items()
    }


def summary_json(summary: dict[str, list[KSummary]]) -> dict[str, Any]:
    """The summary in their ``evaluation_summary.json`` shape: subset -> k -> fields."""
    return {subset: {str(line.k): dict(vars(line)) for line in lines} for subset, lines in summary.items()}

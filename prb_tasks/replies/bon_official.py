"""Best-of-N as the Personalized RewardBench authors measure it (``preset: official``).

Read in their ``BoN/score.py`` and ``BoN/evaluate.py`` (commit a5c6814); prb's own rules
(:mod:`prb_tasks.scoring.bestofk`) stay the default. Under the preset:

- **grade**: the grader's reply is stripped; the text inside the first ``[...]`` (or the
  whole reply when there is none) gives every number it contains (``-?\\d+\\.?\\d*``),
  and the grade is their mean. No number at all scores 0. Nothing is checked against
  the rubric: a count of grades other than the aspects' or a value outside 0-2 is
  averaged as it is (``[2, 1, 0]`` reads 1.0, ``Aspect 1: 2`` reads 1.5, ``[3]`` reads 3).
- **pick**: among the first k candidates the highest reward wins and a tie goes to the
  earliest candidate, as Python's ``max`` keeps the first of equal keys (a NaN reward
  behaves as it does there too: only a later *greater* value replaces the current best).
- **report**: per subset and per k in 1, 2, 4, ..., 128 (a k above N picks among all N,
  as their slicing does), the number of questions, mean, population standard deviation
  (``np.std``), minimum and maximum of the picks' grades.

A failed request or a skipped one (prb's markers; their local vLLM has neither) is no
grade: the candidate's question is left out, and counted, under either rule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from prb_tasks.replies.verdict import marker_outcome

#: Their best-of-k sizes (``K_VALUES`` of their score.py and evaluate.py).
OFFICIAL_SIZES = (1, 2, 4, 8, 16, 32, 64, 128)
#: The ``rule`` a document of the official preset carries (grades and contestants).
RULE = "official"

_BRACKETS = re.compile(r"\[([^\]]+)\]")
_NUMBER = re.compile(r"-?\d+\.?\d*")


def official_grade(completion: object) -> Optional[float]:
    """The grade their evaluate.py reads from a grader reply; None only for prb's
    failure markers (a failed or skipped request, which is no reply at all).

    Args:
        completion: the grader's text.
    """
    if marker_outcome(completion) is not None or not isinstance(completion, str):
        return None
    text = completion.strip()
    inside = _BRACKETS.search(text)
    numbers = [float(n) for n in _NUMBER.findall(inside.group(1) if inside else text)]
    # np.mean as theirs: its pairwise sum can differ from sum() / len() in the last bit.
    return float(np.mean(numbers)) if numbers else 0.0


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

"""Models against each other on the pairs they share: differences, tests, agreement, ranking.

Every comparison uses only the pairs both models were scored on (matched by
``pair_key``), so runs on different subsets, variants or ``--limit`` values are
compared fairly, and the number of shared pairs is reported with each result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from prb_tasks.report.outcomes import Entry, design_of
from prb_tasks.stats.pairs import Interval, cohen_kappa, holm

ALPHA = 0.05
CORRECTION = "Holm"


@dataclass
class Comparison:
    """First minus second on their shared pairs.

    Attributes:
        first, second: entry ids.
        shared: pairs both were scored on.
        diff: accuracy difference with a paired, stratified bootstrap interval.
        first_better, second_better: discordant pairs (see :func:`stats.mcnemar`).
        p_value: exact McNemar p-value (by pairs) or user-level sign-flip p-value (by
            users); p_adjusted: after the Holm correction.
        significant: p_adjusted below :data:`ALPHA`.
        resampled: the unit the interval and test resampled and how many (``36 pairs``,
            ``12 users``).
    """

    first: str
    second: str
    shared: int
    diff: Interval | None
    first_better: int
    second_better: int
    p_value: float
    p_adjusted: float = 1.0
    significant: bool = False
    resampled: str = ""


@dataclass
class Ranked:
    """One row of a ranking."""

    rank: int
    id: str
    acc: float | None
    better_than: list[str] = field(default_factory=list)
    worse_than: list[str] = field(default_factory=list)


def shared_keys(entries: list[Entry]) -> list[str]:
    """Pair keys every entry has, in the first entry's order."""
    if not entries:
        return []
    common = set(entries[0].keys)
    for entry in entries[1:]:
        common &= set(entry.keys)
    return [k for k in entries[0].keys if k in common]


def aligned(entry: Entry, keys: list[str]) -> np.ndarray:
    """The entry's pair scores on ``keys``, in that order."""
    index = entry.index
    return entry.score[np.fromiter((index[k] for k in keys), dtype=int, count=len(keys))]


def compare_two(first: Entry, second: Entry) -> Comparison:
    """Paired difference and exact test of two entries on their shared pairs, resampling
    pairs or users as the data allows (:mod:`prb_tasks.stats.resampling`)."""
    keys = shared_keys([first, second])
    a, b = aligned(first, keys), aligned(second, keys)
    design = design_of(first, keys)
    test = design.paired_test(a, b)
    diff = design.interval(a - b) if keys else None
    return Comparison(first.id, second.id, len(keys), diff, test.first_better, test.second_better, test.p_value,
                      resampled=design.label())


def compare_all(entries: list[Entry]) -> list[Comparison]:
    """Every pair of entries (that share pairs), with Holm-adjusted p-values."""
    comparisons = [compare_two(a, b) for i, a in enumerate(entries) for b in entries[i + 1:]]
    comparisons = [c for c in comparisons if c.shared]
    for c, adjusted in zip(comparisons, holm([c.p_value for c in comparisons])):
        c.p_adjusted = adjusted
        c.significant = adjusted < ALPHA and c.diff is not None and c.diff.value != 0.0
    return comparisons


def outcome_labels(entry: Entry, keys: list[str]) -> list[str]:
    """Per pair: ``right`` (in every order), ``wrong`` (in every order) or ``split``."""
    scores = aligned(entry, keys)
    return ["right" if s == 1.0 else "wrong" if s == 0.0 else "split" for s in scores]


def kappa_matrix(entries: list[Entry]) -> list[list[float | None]]:
    """Cohen's kappa of every two entries' per-pair outcomes, on their shared pairs."""
    size = len(entries)
    matrix: list[list[float | None]] = [[None] * size for _ in range(size)]
    for i in range(size):
        for j in range(i, size):
            keys = shared_keys([entries[i], entries[j]])
            value = cohen_kappa(outcome_labels(entries[i], keys), outcome_labels(entries[j], keys))
            matrix[i][j] = matrix[j][i] = value
    return matrix


def ranking(accs: dict[str, float | None], comparisons: list[Comparison]) -> list[Ranked]:
    """Entries by accuracy, each with the entries it is significantly better or worse than.

    Args:
        accs: entry id -> accuracy on its own pairs.
        comparisons: output of :func:`compare_all`.
    """
    order = sorted(accs, key=lambda i: -(acc if (acc := accs[i]) is not None else -1.0))
    rows = {i: Ranked(rank + 1, i, accs[i]) for rank, i in enumerate(order)}
    for c in comparisons:
        if not c.significant:
            continue
        winner, loser = (c.first, c.second) if c.diff is not None and c.diff.value > 0 else (c.second, c.first)
        rows[winner].better_than.append(loser)
        rows[loser].worse_than.append(winner)
    return [rows[i] for i in order]

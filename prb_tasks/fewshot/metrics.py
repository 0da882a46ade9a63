"""The k-curve: accuracy per support size, per-user macro with a user-resampled
interval, and the area under the curve.

Every evaluated user has the same number of queries, so at one ``k`` the per-user
macro accuracy (each user's accuracy, averaged over users) equals the pooled
accuracy; its interval resamples *users* (whole users with all their queries,
:func:`~prb_tasks.stats.clusters.user_macro`), never queries.

The area under the k-curve (``aukc``) is the trapezoid area of accuracy plotted
against the positions of the k grid (0, 1, 2, 4, 8, 16 equally spaced), divided by
the width: the mean accuracy with the two ends counting half. It is computed over the
k values present; 1.0 means always right.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from prb_tasks.stats.clusters import user_macro
from prb_tasks.stats.pairs import ITERS, SEED, Interval

_NAN = float("nan")


@dataclass(frozen=True)
class KPoint:
    """One point of a k-curve.

    Attributes:
        k: support size.
        users: users evaluated at this k.
        queries: query pairs scored.
        accuracy: per-user macro accuracy with its user-resampled 95% interval.
    """

    k: int
    users: int
    queries: int
    accuracy: Interval


def area_under_curve(accuracy_by_k: dict[int, float]) -> float:
    """The normalised trapezoid area of accuracy over the k grid's positions (module docstring).

    Args:
        accuracy_by_k: accuracy at each k evaluated.
    """
    ks = sorted(k for k, v in accuracy_by_k.items() if not np.isnan(v))
    if not ks:
        return _NAN
    if len(ks) == 1:
        return float(accuracy_by_k[ks[0]])
    ys = np.array([accuracy_by_k[k] for k in ks])
    return float(((ys[:-1] + ys[1:]) / 2).mean())


def k_curve(outcomes: Iterable[tuple[int, str, float]], iters: int = ITERS, seed: int = SEED) -> list[KPoint]:
    """The curve of one method: a point per k, in k order.

    Args:
        outcomes: ``(k, user_id, correct)`` per scored query.
        iters: bootstrap resamples per k.
        seed: generator seed.
    """
    by_k: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for k, user, correct in outcomes:
        by_k[int(k)].append((str(user), float(correct)))
    points = []
    for k in sorted(by_k):
        interval = user_macro(by_k[k], iters, seed)
        assert interval is not None
        points.append(KPoint(k, len({u for u, _ in by_k[k]}), len(by_k[k]), interval))
    return points


def curve_area(points: Sequence[KPoint]) -> float:
    """``aukc`` of a curve from :func:`k_curve`."""
    return area_under_curve({p.k: p.accuracy.value for p in points})


# --- lm-eval aggregations: each document emits (k, user_id, correct) -------------------

def aukc(items: Iterable[tuple[int, str, float]]) -> float:
    """lm-eval aggregation: area under the k-curve of the per-user macro accuracies."""
    by_k: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for k, user, correct in items:
        by_k[int(k)].append((str(user), float(correct)))
    return area_under_curve({k: _macro(v) for k, v in by_k.items()})


def _macro(outcomes: list[tuple[str, float]]) -> float:
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for user, correct in outcomes:
        sums[user] += correct
        counts[user] += 1
    return float(np.mean([sums[u] / counts[u] for u in sums])) if sums else _NAN


def mean_present(items: Iterable[float | None]) -> float:
    """lm-eval aggregation: the mean of the values that are there (documents of other k give None)."""
    values = [float(v) for v in items if v is not None]
    return float(np.mean(values)) if values else _NAN


def macro_low(items: Iterable[tuple[str, float] | None]) -> float:
    """lm-eval aggregation: lower end of the user-resampled 95% interval of the macro accuracy."""
    interval = user_macro([i for i in items if i is not None])
    return _NAN if interval is None else interval.low


def macro_high(items: Iterable[tuple[str, float] | None]) -> float:
    """lm-eval aggregation: upper end of the user-resampled 95% interval of the macro accuracy."""
    interval = user_macro([i for i in items if i is not None])
    return _NAN if interval is None else interval.high

"""How well one ranking of models predicts another: the measures of ``prb validity``.

Each function takes two equal-length sequences, one value per model: ``x`` the
benchmark accuracy, ``y`` the downstream gain. Spearman, Kendall tau (tau-b, which
corrects for ties) and Pearson come from scipy. NDCG and RBO are the two
top-weighted measures the Personalized RewardBench paper reports:

- NDCG: models ordered by benchmark accuracy, gains are the downstream values
  shifted so the lowest is 0; 1.0 means the benchmark's order puts the best
  downstream models first (log2 position discount, as usual; models tied on
  accuracy share the mean discount of their places).
- RBO (rank-biased overlap, Webber et al. 2010), the extrapolated form for two
  complete rankings of the same items: 1.0 for identical orders; ``p`` sets how much
  the top counts (0.9: the first ten places carry about 86% of the weight).

Every measure is None when it is undefined (fewer than two models, or no spread).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from prb_tasks.stats.pairs import LEVEL, Interval

Measure = Callable[["Sequence[float] | np.ndarray", "Sequence[float] | np.ndarray"], "float | None"]
RBO_P = 0.9


def _arrays(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("correlation needs two equal-length lists of values")
    return a, b


def _defined(a: np.ndarray, b: np.ndarray) -> bool:
    return len(a) >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float | None:
    """Spearman's rank correlation (ties get their average rank)."""
    from scipy.stats import spearmanr

    a, b = _arrays(x, y)
    return _finite(spearmanr(a, b).statistic) if _defined(a, b) else None


def kendall(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float | None:
    """Kendall's tau-b."""
    from scipy.stats import kendalltau

    a, b = _arrays(x, y)
    return _finite(kendalltau(a, b).statistic) if _defined(a, b) else None


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float | None:
    """Pearson's linear correlation."""
    from scipy.stats import pearsonr

    a, b = _arrays(x, y)
    return _finite(pearsonr(a, b).statistic) if _defined(a, b) and len(a) >= 2 else None


def _order(values: np.ndarray) -> np.ndarray:
    """Indices from highest to lowest; equal values keep their given order (stable)."""
    return np.argsort(-values, kind="stable")


def ndcg(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float | None:
    """NDCG of the ranking by ``x`` with relevance ``y - min(y)``.

    Args:
        x: the predicting values (benchmark accuracy); higher ranks first.
        y: the outcome (downstream gain); higher is more relevant.
    """
    a, b = _arrays(x, y)
    if len(a) < 2 or np.ptp(b) == 0:
        return None
    relevance = b - b.min()
    discount = 1.0 / np.log2(np.arange(2, len(a) + 2))
    ideal = float(np.sort(relevance)[::-1] @ discount)
    # Models tied on x share their places: each gets the mean discount of the group's
    # places (the expectation over the tied orders), so input order never matters.
    order = _order(a)
    shared = discount.copy()
    sorted_x = a[order]
    start = 0
    while start < len(a):
        end = start
        while end + 1 < len(a) and sorted_x[end + 1] == sorted_x[start]:
            end += 1
        shared[start:end + 1] = discount[start:end + 1].mean()
        start = end + 1
    return float(relevance[order] @ shared) / ideal


def rbo(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, p: float = RBO_P) -> float | None:
    """Extrapolated rank-biased overlap of the orders by ``x`` and by ``y``.

    Both rankings hold the same ``n`` items, so the overlap at depth ``n`` is ``n`` and
    the extrapolated form (Webber et al., eq. 32) is
    ``(1 - p) / p * sum_{d=1..n} A_d p^d + A_n p^n`` where ``A_d`` is the share of
    items the two top-``d`` lists have in common.

    Args:
        x: one value per item, ranked from highest to lowest.
        y: another value per item, ranked the same way.
        p: persistence, 0 < p < 1 (smaller weighs the top more).
    """
    a, b = _arrays(x, y)
    if len(a) < 2:
        return None
    first, second = _order(a).tolist(), _order(b).tolist()
    seen_a: set[int] = set()
    seen_b: set[int] = set()
    overlap = 0
    total = 0.0
    agreement = 0.0
    for depth in range(1, len(a) + 1):
        ia, ib = first[depth - 1], second[depth - 1]
        if ia == ib:
            overlap += 1
        else:
            overlap += (ia in seen_b) + (ib in seen_a)
        seen_a.add(ia)
        seen_b.add(ib)
        agreement = overlap / depth
        total += agreement * p ** depth
    n = len(a)
    return float((1 - p) / p * total + agreement * p ** n)


def _batch_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import warnings

    from scipy.stats import NearConstantInputWarning, pearsonr

    out = np.full(len(a), np.nan)
    ok = (np.ptp(a, axis=1) > 0) & (np.ptp(b, axis=1) > 0)
    if ok.any():
        # Among thousands of resamples of a few models some rows are nearly constant; scipy's
        # warning about them would reach the user's terminal as noise about one resample.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NearConstantInputWarning)
            out[ok] = pearsonr(a[ok], b[ok], axis=1).statistic
    return out


def _batch_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return _batch_pearson(rankdata(a, axis=1), rankdata(b, axis=1))


def _batch_kendall(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of every row pair: (concordant - discordant) / sqrt(untied-x pairs * untied-y pairs)."""
    i, j = np.triu_indices(a.shape[1], k=1)
    sx, sy = np.sign(a[:, i] - a[:, j]), np.sign(b[:, i] - b[:, j])
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (sx * sy).sum(axis=1) / np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=1))
    return np.where(np.isfinite(tau), tau, np.nan)


def batch(name: str, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """One measure on every row of ``xs`` and ``ys`` (bootstrap draws x models); NaN where undefined.

    Spearman, Kendall and Pearson are computed for all rows at once (scipy's ``pearsonr``
    along an axis; tau-b from pair signs), which is what makes thousands of bootstrap
    draws cheap; tests check them against the one-row functions. NDCG and RBO call theirs.

    Args:
        name: a key of :data:`MEASURES`.
        xs: a 2-D array, one row per draw.
        ys: an array of the same shape as ``xs``.
    """
    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if xs.ndim != 2 or xs.shape != ys.shape:
        raise ValueError("batch correlation needs two equal-shape 2-D arrays")
    if xs.shape[1] < 2 or not len(xs):
        return np.full(len(xs), np.nan)
    out = np.full(len(xs), np.nan)
    # A row with a missing value (a model that drew nothing) has no correlation.
    ok = np.isfinite(xs).all(axis=1) & np.isfinite(ys).all(axis=1)
    fast = {"pearson": _batch_pearson, "spearman": _batch_spearman, "kendall": _batch_kendall}
    if name in fast:
        out[ok] = fast[name](xs[ok], ys[ok])
    else:
        values = [MEASURES[name](x, y) for x, y in zip(xs[ok], ys[ok])]
        out[ok] = [np.nan if v is None else v for v in values]
    return out


#: Name -> measure, in the order reports list them.
MEASURES: dict[str, Measure] = {
    "spearman": spearman,
    "kendall": kendall,
    "pearson": pearson,
    "ndcg": ndcg,
    "rbo": rbo,
}


def draw_interval(draws: np.ndarray, point: float | None) -> Interval | None:
    """A percentile interval around ``point`` from bootstrap draws of a measure.

    Args:
        draws: the measure on each resample; NaN where it was undefined there.
        point: the measure on the data; None (undefined) gives None.

    Returns:
        None when fewer than half of the draws are defined: an interval from a handful
        of them would mislead.
    """
    kept = draws[np.isfinite(draws)]
    if point is None or len(kept) == 0 or len(kept) < 0.5 * len(draws):
        return None
    tail = (1.0 - LEVEL) / 2.0
    low, high = np.quantile(kept, [tail, 1.0 - tail])
    return Interval(point, float(low), float(high))


def bootstrap_p(draws: np.ndarray) -> float | None:
    """Two-sided bootstrap p-value of a difference being 0, from its draws (NaN ones dropped)."""
    kept = draws[np.isfinite(draws)]
    if len(kept) == 0:
        return None
    return float(min(1.0, 2 * min(np.mean(kept <= 0), np.mean(kept >= 0))))


def williams(r12: float, r13: float, r23: float, n: int) -> tuple[float, float] | None:
    """Williams' t for H0: r12 = r13, where variable 1 (the downstream) is shared.

    Args:
        r12: correlation of the downstream with the first benchmark.
        r13: correlation of the downstream with the second benchmark.
        r23: correlation of the two benchmarks.
        n: models.

    Returns:
        (t, two-sided p) with ``n - 3`` degrees of freedom, or None when undefined.
    """
    from scipy.stats import t as student

    if n < 4 or any(v is None or not math.isfinite(v) for v in (r12, r13, r23)):
        return None
    det = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    denominator = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    if denominator <= 0:
        return None
    value = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denominator)
    return float(value), float(2 * student.sf(abs(value), n - 3))

"""The statistics of ``prb compare``, on per-pair scores.

- Intervals come from a stratified bootstrap over *pairs*: the two judgments of a pair
  (both orders) share the pair's content, so they are resampled together, and each
  subset is resampled within itself, as the benchmark's subsets have fixed sizes.
- Differences between two models are bootstrapped on the same resampled pairs
  (paired), and tested exactly: McNemar's test (scipy's exact binomial test on the
  pairs where the two models disagree), or for scores of 0, 1/2, 1 its exact
  sign-flip generalisation.
- Multiple comparisons are corrected with Holm's step-down method.

The generator is seeded, so a report is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SEED = 20240607
ITERS = 2000
LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A point estimate with a percentile bootstrap interval."""

    value: float
    low: float
    high: float


def _draw_means(strata: list[np.ndarray], iters: int, seed: int) -> np.ndarray:
    """(iters, strata) matrix of per-stratum means of bootstrap resamples.

    Per-pair values take few distinct levels (0, 1/2, 1; differences of those), and a
    resample of n values with replacement is fully described by how many copies of
    each level it drew: a multinomial draw over the levels, with the same distribution
    as drawing n indices but thousands of times cheaper at the benchmark's size.
    """
    rng = np.random.default_rng(seed)
    out = np.empty((iters, len(strata)))
    for k, values in enumerate(strata):
        levels, counts = np.unique(values, return_counts=True)
        if len(levels) <= 64:
            draws = rng.multinomial(len(values), counts / counts.sum(), size=iters)
            out[:, k] = draws @ levels / len(values)
        else:
            picks = rng.integers(0, len(values), size=(iters, len(values)))
            out[:, k] = values[picks].mean(axis=1)
    return out


def bootstrap(strata: list[np.ndarray], macro: bool = False, iters: int = ITERS, seed: int = SEED,
              level: float = LEVEL) -> Interval | None:
    """Mean of per-pair values with a stratified percentile bootstrap interval.

    Args:
        strata: one array of per-pair values per subset (e.g. pair scores, or the
            per-pair differences of two models for a paired interval).
        macro: the plain mean of the subset means instead of the pooled (micro) mean.
        iters: bootstrap draws.
        seed: generator seed.
        level: coverage of the interval.
    """
    strata = [np.asarray(s, dtype=float) for s in strata if len(s)]
    if not strata:
        return None
    sizes = np.array([len(s) for s in strata], dtype=float)
    weights = np.full(len(strata), 1.0 / len(strata)) if macro else sizes / sizes.sum()
    point = float(sum(w * s.mean() for w, s in zip(weights, strata)))
    draws = _draw_means(strata, iters, seed) @ weights
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return Interval(point, float(low), float(high))


@dataclass(frozen=True)
class McNemar:
    """Exact paired test of two models on the same pairs.

    Attributes:
        first_better: pairs where the first model scored higher.
        second_better: pairs where the second model scored higher.
        p_value: two-sided exact p-value.
    """

    first_better: int
    second_better: int
    p_value: float


def _sign_flip_p(diffs: np.ndarray) -> float:
    """Exact two-sided p of the sum of paired differences under random signs.

    Under the null hypothesis each pair's difference is as likely to be +d as -d. The
    nonzero |d| take a few values (1/2 and 1 for both-order judges); the number of
    positive signs within each value is binomial(n, 1/2), so the null distribution of
    the sum is a convolution of binomials on a grid of the smallest unit.
    """
    from fractions import Fraction

    from scipy.stats import binom

    sizes = np.abs(diffs)
    units = {Fraction(float(v)).limit_denominator(12) for v in np.unique(sizes)}
    step = Fraction(1, int(np.lcm.reduce([u.denominator for u in units])))
    grid = np.ones(1)
    observed = 0
    for unit in sorted(units):
        weight = int(unit / step)
        members = diffs[np.isclose(sizes, float(unit))]
        n = len(members)
        # contribution weight * (2k - n) for k positive signs: spaced 2 * weight apart
        spread = np.zeros(2 * weight * n + 1)
        spread[:: 2 * weight] = binom.pmf(np.arange(n + 1), n, 0.5)
        grid = np.convolve(grid, spread)
        observed += weight * (2 * int(np.sum(members > 0)) - n)
    offset = (len(grid) - 1) // 2
    values = np.arange(len(grid)) - offset
    return float(min(1.0, grid[np.abs(values) >= abs(observed)].sum()))


def mcnemar(first: np.ndarray, second: np.ndarray) -> McNemar:
    """Exact McNemar test on per-pair scores of two models (aligned arrays).

    With one verdict per pair the scores are 0/1 and this is McNemar's exact test
    (scipy's binomial test on the discordant pairs). Judges seen in both orders score a
    pair 0, 1/2 or 1, so discordant pairs differ by 1/2 or 1; then the exact sign-flip
    test of the summed differences is used, which weighs each pair by how much the
    two models differ on it and reduces to McNemar's test when every difference is 1.
    """
    first = np.asarray(first, dtype=float)
    second = np.asarray(second, dtype=float)
    diffs = first - second
    diffs = diffs[~np.isclose(diffs, 0.0)]
    b, c = int(np.sum(diffs > 0)), int(np.sum(diffs < 0))
    if b + c == 0:
        return McNemar(b, c, 1.0)
    if np.allclose(np.abs(diffs), np.abs(diffs[0])):
        from scipy.stats import binomtest

        return McNemar(b, c, min(1.0, float(binomtest(b, b + c, 0.5).pvalue)))
    return McNemar(b, c, _sign_flip_p(diffs))


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values (family-wise error control), in the input order.

    scipy offers only false-discovery-rate control, which does not bound the chance
    of calling any single ranking difference real, hence this short step-down.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def cohen_kappa(first: list, second: list) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (1 = identical labels).

    None when there are no items; 1.0 when both raters use a single identical label
    throughout (perfect agreement with no variation to correct for chance).
    """
    if len(first) != len(second):
        raise ValueError("cohen_kappa needs two label lists of the same length")
    n = len(first)
    if n == 0:
        return None
    labels = sorted(set(first) | set(second), key=str)
    pos = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(first, second):
        table[pos[x], pos[y]] += 1
    observed = np.trace(table) / n
    expected = float((table.sum(axis=1) @ table.sum(axis=0)) / (n * n))
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else 0.0
    return float((observed - expected) / (1.0 - expected))

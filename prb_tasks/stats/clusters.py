"""User-level (cluster) statistics, for data where several pairs come from one user.

Pairs of one user share that user's tastes and history, so they are not independent
evidence: a bootstrap or test that resamples pairs treats a talkative user's fifty
pairs as fifty users and gives intervals that are too narrow. Here the unit is the
user (any cluster of pairs):

- :func:`cluster_bootstrap` draws users with replacement, keeping all of each drawn
  user's pairs, and recomputes the pooled (or per-subset macro) mean;
- :func:`cluster_sign_flip` tests a paired difference by flipping the sign of each
  user's summed difference at once (exact when there are few users, else a seeded
  Monte-Carlo estimate);
- :func:`user_macro` averages each user's mean over users, with a user-resampled interval.

The draws follow a fixed, documented recipe so that anyone can reproduce an interval:
resample ``i`` picks ``C`` user indices with ``rng.integers(0, C, size=C)`` from
``rng = numpy.random.default_rng(seed)``, resample after resample (users numbered by
their order of first appearance).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from prb_tasks.stats.pairs import ITERS, LEVEL, SEED, Interval

SIGN_FLIPS = 20000
EXACT_USERS = 16  # 2**16 sign patterns: enumerate them instead of sampling
_CHUNK_CELLS = 4_000_000  # indices drawn per chunk (memory bound; the stream is the same)


def cluster_codes(labels: list[str] | np.ndarray) -> np.ndarray:
    """Integer code per pair, users numbered by their first appearance.

    Args:
        labels: per pair, the user it belongs to.
    """
    seen: dict[str, int] = {}
    return np.array([seen.setdefault(str(x), len(seen)) for x in labels], dtype=int)


def draw_counts(clusters: int, iters: int, seed: int) -> Iterator[np.ndarray]:
    """Bootstrap resamples of ``clusters`` users.

    Each is a (chunk, clusters) matrix of how often each user was drawn; see the module
    docstring for the recipe.

    Args:
        clusters: number of users.
        iters: number of resamples in all.
        seed: generator seed.
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // max(clusters, 1))
    done = 0
    while done < iters:
        rows = min(chunk, iters - done)
        picks = rng.integers(0, clusters, size=(rows, clusters))
        flat = (picks + clusters * np.arange(rows)[:, None]).ravel()
        yield np.bincount(flat, minlength=rows * clusters).reshape(rows, clusters).astype(float)
        done += rows


def cluster_bootstrap(values: np.ndarray, clusters: np.ndarray, strata: np.ndarray | None = None,
                      macro: bool = False, iters: int = ITERS, seed: int = SEED,
                      level: float = LEVEL) -> Interval | None:
    """Mean of per-pair values with a percentile interval from resampling whole users.

    Args:
        values: per pair, the value to average (a pair score, a difference of two models...).
        clusters: per pair, its user's code (:func:`cluster_codes`).
        strata: per pair, its subset; needed for ``macro``.
        macro: the plain mean of the subset means instead of the pooled mean; a subset
            that a resample happens to miss is left out of that resample's mean.
        iters: bootstrap resamples.
        seed: generator seed.
        level: coverage of the interval.
    """
    values = np.asarray(values, dtype=float)
    if not len(values):
        return None
    clusters = np.asarray(clusters, dtype=int)
    groups = cluster_codes(strata) if macro and strata is not None else np.zeros(len(values), dtype=int)
    n_clusters, n_groups = int(clusters.max()) + 1, int(groups.max()) + 1
    sums = np.zeros((n_clusters, n_groups))
    sizes = np.zeros((n_clusters, n_groups))
    np.add.at(sums, (clusters, groups), values)
    np.add.at(sizes, (clusters, groups), 1.0)
    if macro:
        point = float(np.mean(sums.sum(axis=0) / sizes.sum(axis=0)))
    else:
        point = float(values.mean())
    draws = []
    for counts in draw_counts(n_clusters, iters, seed):
        drawn_sums, drawn_sizes = counts @ sums, counts @ sizes
        if macro:
            with np.errstate(invalid="ignore", divide="ignore"):
                draws.append(np.nanmean(drawn_sums / np.where(drawn_sizes > 0, drawn_sizes, np.nan), axis=1))
        else:
            draws.append(drawn_sums.sum(axis=1) / drawn_sizes.sum(axis=1))
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(np.concatenate(draws), [tail, 1.0 - tail])
    return Interval(point, float(low), float(high))


def cluster_means(values: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Each user's mean value, in user-code order."""
    clusters = np.asarray(clusters, dtype=int)
    sums = np.bincount(clusters, weights=np.asarray(values, dtype=float))
    return sums / np.bincount(clusters)


def cluster_sign_flip(diffs: np.ndarray, clusters: np.ndarray, iters: int = SIGN_FLIPS,
                      seed: int = SEED) -> float:
    """Two-sided p-value of a paired difference, flipping whole users' signs.

    Under the null hypothesis the two models are exchangeable within each user, so
    each user's summed difference is as likely to be +d as -d. The statistic is the
    total difference over all pairs. With at most :data:`EXACT_USERS` users who differ
    at all, every sign pattern is enumerated (exact); otherwise ``iters`` random
    patterns are drawn with a fixed seed and p = (1 + at least as extreme) / (1 + iters).

    Args:
        diffs: per pair, first model's score minus the second's.
        clusters: per pair, its user's code.
        iters: random sign patterns when not exact.
        seed: generator seed.
    """
    totals = np.bincount(np.asarray(clusters, dtype=int), weights=np.asarray(diffs, dtype=float))
    totals = totals[~np.isclose(totals, 0.0)]
    if not len(totals):
        return 1.0
    observed = abs(float(totals.sum()))
    slack = 1e-9 * max(1.0, observed)
    if len(totals) <= EXACT_USERS:
        sums = np.zeros(1)
        for total in totals:
            sums = np.concatenate([sums + total, sums - total])
        return min(1.0, float(np.mean(np.abs(sums) >= observed - slack)))
    rng = np.random.default_rng(seed)
    extreme = 0
    chunk = max(1, _CHUNK_CELLS // len(totals))
    done = 0
    while done < iters:
        rows = min(chunk, iters - done)
        # Float signs: the product then runs in BLAS (an integer matrix product does not).
        signs = rng.integers(0, 2, size=(rows, len(totals))).astype(float) * 2.0 - 1.0
        extreme += int(np.sum(np.abs(signs @ totals) >= observed - slack))
        done += rows
    return float(min(1.0, (1 + extreme) / (1 + iters)))


def user_macro(outcomes: Sequence[tuple[str, float]], iters: int = ITERS, seed: int = SEED) -> Interval | None:
    """Each user's mean, averaged over users, with a 95% interval from resampling users.

    Args:
        outcomes: ``(user_id, correct)`` per scored query.
        iters: bootstrap resamples.
        seed: generator seed.
    """
    if not outcomes:
        return None
    codes = cluster_codes([u for u, _ in outcomes])
    values = np.array([float(c) for _, c in outcomes])
    means = np.bincount(codes, weights=values) / np.bincount(codes)
    return cluster_bootstrap(means, np.arange(len(means)), iters=iters, seed=seed)

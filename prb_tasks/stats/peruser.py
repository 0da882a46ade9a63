"""Per-user statistics: how a model's accuracy is spread over users, whom a personalized
model helps, and whose ranking of models differs from the aggregate.

A mean over users hides the users a model serves badly; these small functions look at
the users one by one. Each takes per-pair values with the user of each pair (or per-user
values) and returns a frozen dataclass that says what was resampled and how many times.
Users are numbered by their first appearance (:func:`~prb_tasks.stats.clusters.cluster_codes`),
and every resample is drawn from ``numpy.random.default_rng(seed)``, so a report is the
same run to run.

- :func:`user_means`: each user's mean and number of pairs;
- :func:`spread`: the median user, the mean of the worst-served tenth of users and the
  share of users below chance, each with an interval from resampling users; users with
  fewer than ``min_pairs`` pairs are counted apart;
- :func:`helped_split`: from per-user differences (personalized minus its counterpart),
  the users helped, hurt and left level, with an exact two-sided sign test;
- :func:`group_splits`: the same per group of users, Holm-corrected over the groups;
- :func:`rank_agreement`: each user's ranking of the models against the aggregate
  ranking (Kendall's tau-b), and whose best model differs, with a noise floor from
  resampling each user's own pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from prb_tasks.stats.clusters import cluster_bootstrap, cluster_codes
from prb_tasks.stats.pairs import ITERS, LEVEL, SEED, Interval, holm

#: A user with fewer pairs than this says too little on their own (one pair is 0% or 100%):
#: they are counted apart from the per-user distribution.
MIN_PAIRS = 5
#: Resamples of one user's own pairs for the noise floor of :func:`rank_agreement`.
NOISE_ITERS = 500
#: A user's ranking differs beyond noise when fewer than this share of the resamples of
#: their own pairs agree with the aggregate (a one-sided 5% level per user).
NOISE_LEVEL = 0.05
#: Share of users in the "worst decile".
DECILE = 0.10


@dataclass(frozen=True)
class UserMeans:
    """Each user's mean of a per-pair value, users in first-appearance order."""

    users: list[str]
    means: np.ndarray
    pairs: np.ndarray


def user_means(values: np.ndarray, users: list[str]) -> UserMeans:
    """Each user's mean value and how many pairs it rests on.

    Args:
        values: per pair, the value (a pair score 0, 1/2 or 1; a difference of two models).
        users: per pair, the user it belongs to.
    """
    codes = cluster_codes(users)
    order = list(dict.fromkeys(str(u) for u in users))
    counts = np.bincount(codes, minlength=len(order)).astype(float)
    sums = np.bincount(codes, weights=np.asarray(values, dtype=float), minlength=len(order))
    return UserMeans(order, sums / np.maximum(counts, 1.0), counts.astype(int))


@dataclass(frozen=True)
class Spread:
    """How a model's per-user accuracy is spread.

    Attributes:
        users: users counted (at least ``min_pairs`` pairs each).
        too_few: users left out for having fewer than ``min_pairs`` pairs.
        min_pairs: the threshold.
        chance: the accuracy of a coin flip.
        median: the median user's accuracy.
        worst_decile: the mean accuracy of the worst-served tenth of users (at least one user).
        below_chance: the share of users whose accuracy is below ``chance``.
        iters: resamples of users behind the intervals.
    """

    users: int
    too_few: int
    min_pairs: int
    chance: float
    median: Interval | None
    worst_decile: Interval | None
    below_chance: Interval | None
    iters: int

    @property
    def resampled(self) -> str:
        return f"{self.users} users"


def _worst(rows: np.ndarray, share: float = DECILE) -> np.ndarray:
    """Mean of the lowest ``ceil(share * n)`` values of each row."""
    n = rows.shape[1]
    take = max(1, math.ceil(share * n))
    return np.sort(rows, axis=1)[:, :take].mean(axis=1)


def _interval(point: float, draws: np.ndarray, level: float) -> Interval:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return Interval(point, float(low), float(high))


def spread(means: np.ndarray, pairs: np.ndarray, min_pairs: int = MIN_PAIRS, chance: float = 0.5,
           iters: int = ITERS, seed: int = SEED, level: float = LEVEL) -> Spread:
    """The distribution of per-user accuracy, with intervals from resampling users.

    Each resample draws the counted users with replacement (``rng.integers(0, U, size=U)``)
    and recomputes the three numbers.

    Args:
        means: per user, the accuracy (:func:`user_means`).
        pairs: per user, how many pairs it rests on.
        min_pairs: users with fewer pairs are counted apart.
        chance: accuracy of a coin flip (0.5 for a pair).
        iters: resamples of users.
        seed: generator seed.
        level: coverage of the intervals.
    """
    means = np.asarray(means, dtype=float)
    keep = np.asarray(pairs) >= min_pairs
    acc = means[keep]
    count = len(acc)
    if not count:
        return Spread(0, int((~keep).sum()), min_pairs, chance, None, None, None, iters)
    rng = np.random.default_rng(seed)
    medians, worst, below = [], [], []
    chunk = max(1, 2_000_000 // count)
    done = 0
    while done < iters:
        rows = acc[rng.integers(0, count, size=(min(chunk, iters - done), count))]
        medians.append(np.median(rows, axis=1))
        worst.append(_worst(rows))
        below.append((rows < chance).mean(axis=1))
        done += len(rows)
    return Spread(
        users=count, too_few=int((~keep).sum()), min_pairs=min_pairs, chance=chance,
        median=_interval(float(np.median(acc)), np.concatenate(medians), level),
        worst_decile=_interval(float(_worst(acc[None, :])[0]), np.concatenate(worst), level),
        below_chance=_interval(float((acc < chance).mean()), np.concatenate(below), level),
        iters=iters,
    )


@dataclass(frozen=True)
class Split:
    """Users a personalized model helps, hurts and leaves level against its counterpart.

    Attributes:
        users: users compared.
        helped, hurt, level: how many users' mean difference is above, below or at 0.
        p_value: exact two-sided sign test (binomial, 1/2) of helped against hurt; level
            users carry no sign and are left out of it.
        mean_diff: the mean over users of each user's difference, with an interval from
            resampling users (None without users).
        p_adjusted: the p-value Holm-corrected over a family of splits (groups), else None.
    """

    users: int
    helped: int
    hurt: int
    level: int
    p_value: float
    mean_diff: Interval | None
    p_adjusted: float | None = None

    def share(self, which: str) -> float | None:
        """Share of users ``helped``, ``hurt`` or ``level``."""
        return getattr(self, which) / self.users if self.users else None


def sign_test(positive: int, negative: int) -> float:
    """Exact two-sided sign test: how surprising ``positive`` of ``positive + negative``
    is when each sign is a fair coin.

    Args:
        positive: users with a positive difference.
        negative: users with a negative difference.
    """
    from scipy.stats import binomtest

    total = positive + negative
    return 1.0 if total == 0 else float(binomtest(positive, total, 0.5).pvalue)


def helped_split(diffs: np.ndarray, iters: int = ITERS, seed: int = SEED, tol: float = 1e-12) -> Split:
    """Helped / hurt / level over users, with the sign test.

    Args:
        diffs: per user, the personalized model's accuracy minus its counterpart's on the
            user's shared pairs.
        iters: resamples of users for the mean difference's interval.
        seed: generator seed.
        tol: a difference within this of 0 is level.
    """
    diffs = np.asarray(diffs, dtype=float)
    helped, hurt = int(np.sum(diffs > tol)), int(np.sum(diffs < -tol))
    mean = cluster_bootstrap(diffs, np.arange(len(diffs)), iters=iters, seed=seed) if len(diffs) else None
    return Split(len(diffs), helped, hurt, len(diffs) - helped - hurt, sign_test(helped, hurt), mean)


def group_splits(diffs: np.ndarray, groups: list[str | None], iters: int = ITERS,
                 seed: int = SEED) -> list[tuple[str, Split]]:
    """:func:`helped_split` per group of users, the sign tests Holm-corrected over the groups.

    Args:
        diffs: per user, the difference (as :func:`helped_split`).
        groups: per user, its group (a country, a language, an age band); None leaves the
            user out of every group.
        iters: resamples of users per group.
        seed: generator seed.
    """
    diffs = np.asarray(diffs, dtype=float)
    names = sorted({g for g in groups if g is not None})
    splits = [helped_split(diffs[np.array([g == name for g in groups])], iters, seed) for name in names]
    adjusted = holm([s.p_value for s in splits]) if splits else []
    return [(name, Split(s.users, s.helped, s.hurt, s.level, s.p_value, s.mean_diff, float(p)))
            for name, s, p in zip(names, splits, adjusted)]


def tau_b(rows: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row against ``reference`` (NaN where either has no order).

    Args:
        rows: (n, m) values, one ranking of m models per row.
        reference: (m,) the ranking to compare with.
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    ref = np.asarray(reference, dtype=float)
    i, j = np.triu_indices(len(ref), k=1)
    a = np.sign(rows[:, i] - rows[:, j])
    b = np.sign(ref[i] - ref[j])
    n_a = np.sum(a != 0, axis=1)
    n_b = float(np.sum(b != 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n_a > 0) & (n_b > 0), (a * b).sum(axis=1) / np.sqrt(n_a * n_b), np.nan)


@dataclass(frozen=True)
class Agreement:
    """Each user's ranking of the models against the aggregate ranking.

    Attributes:
        models: models ranked (the columns given).
        users: users with a ranking (their accuracies are not all equal).
        all_tied: users left out because every model scored the same on their pairs.
        aggregate: each model's accuracy over all pairs (the aggregate ranking).
        mean_tau: the mean over users of Kendall's tau-b between the user's accuracies and
            the aggregate's, with an interval from resampling users (the aggregate held fixed).
        tau_at_most_zero: share of users whose tau is 0 or below (no agreement or the reverse).
        tau_at_most_zero_beyond_noise: share of users whose tau stays at or below 0 in at
            least ``1 - noise_level`` of the resamples of their own pairs.
        best_differs: share of users for whom the aggregate best model is not (one of) their best.
        best_differs_beyond_noise: share of users for whom the aggregate best is (one of) their
            best in fewer than ``noise_level`` of the resamples of their own pairs.
        noise_iters: resamples of each user's own pairs.
        noise_level: the per-user level of the noise floor.
        iters: resamples of users behind ``mean_tau``'s interval.
    """

    models: int
    users: int
    all_tied: int
    aggregate: list[float]
    mean_tau: Interval | None
    tau_at_most_zero: float | None
    tau_at_most_zero_beyond_noise: float | None
    best_differs: float | None
    best_differs_beyond_noise: float | None
    noise_iters: int
    noise_level: float
    iters: int


def _is_best(rows: np.ndarray, model: int, tol: float = 1e-12) -> np.ndarray:
    """Per row, whether ``model`` has the row's top value (ties included)."""
    return rows[:, model] >= rows.max(axis=1) - tol


def rank_agreement(scores: np.ndarray, users: list[str], noise_iters: int = NOISE_ITERS,
                   noise_level: float = NOISE_LEVEL, iters: int = ITERS, seed: int = SEED,
                   level: float = LEVEL) -> Agreement:
    """Whose ranking of the models differs from the aggregate, beyond the noise of their own pairs.

    The aggregate ranking orders the models by their accuracy over all pairs. A user's
    ranking orders them by their accuracy on the user's pairs. Noise floor: each user's
    own pairs are resampled with replacement ``noise_iters`` times (the same draw for every
    model, as they scored the same pairs); a user counts as differing beyond noise only when
    their resampled rankings disagree in at least ``1 - noise_level`` of the draws, so a user
    whose few pairs happened to favour another model is not counted.

    Args:
        scores: (pairs, models) each model's score on each pair (0, 1/2 or 1), on pairs every
            model scored.
        users: per pair, its user.
        noise_iters: resamples of each user's own pairs.
        noise_level: per-user level of the noise floor.
        iters: resamples of users for the mean tau's interval.
        seed: generator seed.
        level: coverage of the interval.
    """
    scores = np.asarray(scores, dtype=float)
    models = scores.shape[1]
    aggregate = scores.mean(axis=0)
    best = int(np.argmax(aggregate))
    codes = cluster_codes(users)
    rng = np.random.default_rng(seed)
    taus, differs, differs_noise, low_tau, low_tau_noise = [], [], [], [], []
    tied = 0
    for user in range(int(codes.max()) + 1 if len(codes) else 0):
        mine = scores[codes == user]
        acc = mine.mean(axis=0)
        tau = float(tau_b(acc[None, :], aggregate)[0])
        if math.isnan(tau):
            tied += 1
            continue
        draws = mine[rng.integers(0, len(mine), size=(noise_iters, len(mine)))].mean(axis=1)
        draw_tau = tau_b(draws, aggregate)
        taus.append(tau)
        differs.append(not bool(_is_best(acc[None, :], best)[0]))
        differs_noise.append(float(np.mean(_is_best(draws, best))) < noise_level)
        low_tau.append(tau <= 0)
        # A draw with every model tied has no ranking; it is no evidence of disagreement.
        low_tau_noise.append(float(np.mean(~(np.nan_to_num(draw_tau, nan=1.0) <= 0))) < noise_level)
    n = len(taus)
    values = np.array(taus)
    return Agreement(
        models=models, users=n, all_tied=tied, aggregate=[float(x) for x in aggregate],
        mean_tau=cluster_bootstrap(values, np.arange(n), iters=iters, seed=seed, level=level) if n else None,
        tau_at_most_zero=float(np.mean(low_tau)) if n else None,
        tau_at_most_zero_beyond_noise=float(np.mean(low_tau_noise)) if n else None,
        best_differs=float(np.mean(differs)) if n else None,
        best_differs_beyond_noise=float(np.mean(differs_noise)) if n else None,
        noise_iters=noise_iters, noise_level=noise_level, iters=iters,
    )

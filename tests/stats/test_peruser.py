"""Per-user statistics on constructed data where the truth is planted, and null cases
where they must find nothing (deterministic seeds; nothing timed)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, kendalltau

from prb_tasks.stats.peruser import (
    MIN_PAIRS,
    group_splits,
    helped_split,
    rank_agreement,
    sign_test,
    spread,
    tau_b,
    user_means,
)


def test_user_means_keeps_first_appearance_order_and_counts_pairs():
    means = user_means(np.array([1.0, 0.0, 1.0, 0.5]), ["b", "a", "b", "a"])
    assert means.users == ["b", "a"]
    assert means.means.tolist() == [1.0, 0.25]
    assert means.pairs.tolist() == [2, 2]


def test_spread_finds_the_planted_badly_served_users_and_counts_thin_users_apart():
    # 18 users at 80%, 2 planted users at 20% (the worst tenth of 20), 3 users with too few pairs.
    means = np.array([0.8] * 18 + [0.2, 0.2] + [0.0, 0.0, 0.0])
    pairs = np.array([10] * 20 + [MIN_PAIRS - 1] * 3)
    found = spread(means, pairs)
    assert (found.users, found.too_few, found.min_pairs) == (20, 3, MIN_PAIRS)
    assert found.median.value == pytest.approx(0.8)
    assert found.worst_decile.value == pytest.approx(0.2)
    assert found.below_chance.value == pytest.approx(0.1)
    assert found.below_chance.low < 0.1 < found.below_chance.high  # resampled users, not a fixed point
    assert found.resampled == "20 users"


def test_spread_null_everyone_served_alike_has_nobody_below_chance():
    found = spread(np.full(30, 0.7), np.full(30, 8))
    assert found.below_chance.value == found.below_chance.high == 0.0
    assert found.worst_decile.value == pytest.approx(0.7) == found.median.value
    assert (found.median.low, found.median.high) == pytest.approx((0.7, 0.7))


def test_spread_with_every_user_too_thin_says_nothing():
    found = spread(np.array([1.0, 0.0]), np.array([1, 2]))
    assert found.users == 0 and found.too_few == 2 and found.median is None


def test_helped_split_counts_the_planted_users_and_matches_the_binomial_sign_test():
    diffs = np.array([0.25] * 20 + [-0.1] * 2 + [0.0] * 8)
    found = helped_split(diffs)
    assert (found.users, found.helped, found.hurt, found.level) == (30, 20, 2, 8)
    assert found.share("helped") == pytest.approx(20 / 30)
    assert found.p_value == pytest.approx(binomtest(20, 22, 0.5).pvalue)
    assert found.p_value < 0.001
    assert found.mean_diff.low > 0


def test_helped_split_null_symmetric_differences_are_not_significant():
    rng = np.random.default_rng(7)
    diffs = rng.choice([-0.25, -0.125, 0.0, 0.125, 0.25], size=40)
    found = helped_split(diffs)
    assert found.p_value > 0.05
    assert found.mean_diff.low < 0 < found.mean_diff.high
    assert sign_test(0, 0) == 1.0


def test_group_splits_find_the_one_group_the_model_helps():
    rng = np.random.default_rng(3)
    groups = ["PT"] * 15 + ["JP"] * 15 + ["NG"] * 15
    diffs = np.concatenate([rng.uniform(0.05, 0.3, 15),  # helps every Portuguese user
                            rng.choice([-0.2, 0.2], 15), rng.choice([-0.2, 0.2], 15)])
    found = dict(group_splits(diffs, groups))
    assert set(found) == {"PT", "JP", "NG"}
    assert found["PT"].helped == 15 and found["PT"].p_adjusted < 0.05
    assert found["JP"].p_adjusted >= 0.05 and found["NG"].p_adjusted >= 0.05
    # Holm: the adjusted p is never below the raw one.
    assert all(s.p_adjusted >= s.p_value for s in found.values())


def test_group_splits_null_no_group_is_found_and_unknown_users_join_none():
    rng = np.random.default_rng(11)
    diffs = rng.choice([-0.2, 0.0, 0.2], 45)
    groups: list[str | None] = ["a"] * 20 + ["b"] * 20 + [None] * 5
    found = dict(group_splits(diffs, groups))
    assert set(found) == {"a", "b"}
    assert sum(s.users for s in found.values()) == 40
    assert all(s.p_adjusted >= 0.05 for s in found.values())


def test_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(0)
    ref = np.array([0.7, 0.6, 0.6, 0.3])
    rows = rng.choice([0.0, 0.5, 1.0], size=(50, 4))
    ours = tau_b(rows, ref)
    for row, tau in zip(rows, ours):
        expected = kendalltau(row, ref).statistic
        assert (np.isnan(tau) and np.isnan(expected)) or tau == pytest.approx(expected)


def _users(rng: np.random.Generator, n_users: int, pairs: int, accuracies: list[float]) -> np.ndarray:
    return np.stack([rng.random(n_users * pairs) < p for p in accuracies], axis=1).astype(float)


def test_rank_agreement_counts_exactly_the_users_whose_best_model_is_planted():
    rng = np.random.default_rng(5)
    n_users, pairs, planted = 60, 40, 8
    scores = _users(rng, n_users, pairs, [0.8, 0.6, 0.4])
    for u in range(planted):  # these users' best model is the third: it is always right for them
        rows = slice(u * pairs, (u + 1) * pairs)
        scores[rows, 2] = 1.0
        scores[rows, 0] = (rng.random(pairs) < 0.3).astype(float)
    users = [f"u{u}" for u in range(n_users) for _ in range(pairs)]
    found = rank_agreement(scores, users)
    assert int(np.argmax(found.aggregate)) == 0  # the aggregate best stays the first model
    assert found.users == n_users and found.all_tied == 0
    assert found.best_differs_beyond_noise == pytest.approx(planted / n_users)
    assert found.best_differs >= found.best_differs_beyond_noise
    assert found.tau_at_most_zero_beyond_noise == pytest.approx(planted / n_users)
    assert found.mean_tau.low < found.mean_tau.value < found.mean_tau.high


def test_rank_agreement_null_users_who_differ_only_by_chance_are_not_counted():
    rng = np.random.default_rng(9)
    n_users, pairs = 60, 40
    scores = _users(rng, n_users, pairs, [0.7, 0.62, 0.5])  # everyone shares one true ranking
    users = [f"u{u}" for u in range(n_users) for _ in range(pairs)]
    found = rank_agreement(scores, users)
    assert found.best_differs > 0.1  # by chance, many users' few pairs favour another model...
    assert found.best_differs_beyond_noise == 0.0  # ...and the noise floor counts none of them
    assert found.tau_at_most_zero > 0 and found.tau_at_most_zero_beyond_noise == 0.0
    assert found.mean_tau.low > 0


def test_rank_agreement_sets_apart_users_whose_models_all_tie():
    scores = np.array([[1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    found = rank_agreement(scores, ["tied", "tied", "x", "x"])
    assert (found.users, found.all_tied) == (1, 1)
    assert found.mean_tau.value == pytest.approx(1.0)

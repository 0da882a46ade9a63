"""The measures of ``prb validity`` on inputs whose values are worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prb_tasks.stats.correlation import MEASURES, kendall, ndcg, pearson, rbo, spearman


def test_spearman_and_kendall_match_hand_counts() -> None:
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    # One swapped neighbour: sum of squared rank differences 2 -> 1 - 6*2/(4*15) = 0.8.
    assert spearman(x, y) == pytest.approx(0.8)
    # 5 concordant, 1 discordant of 6 pairs.
    assert kendall(x, y) == pytest.approx(4 / 6)


def test_kendall_is_tau_b_with_ties() -> None:
    x, y = [1, 1, 2, 3], [1, 2, 3, 4]
    # tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) = 5 / sqrt(5 * 6).
    assert kendall(x, y) == pytest.approx(5 / math.sqrt(30))


def test_pearson_matches_its_formula() -> None:
    x, y = np.array([0.55, 0.61, 0.70, 0.72, 0.80]), np.array([0.10, 0.05, 0.30, 0.25, 0.41])
    dx, dy = x - x.mean(), y - y.mean()
    assert pearson(x, y) == pytest.approx(float(dx @ dy / math.sqrt((dx @ dx) * (dy @ dy))))


def test_ndcg_hand_example() -> None:
    # Ranked by x: relevances (y - min y) 0, 2, 1; the ideal order is 2, 1, 0.
    dcg = 0 + 2 / math.log2(3) + 1 / math.log2(4)
    ideal = 2 + 1 / math.log2(3) + 0
    assert ndcg([3, 2, 1], [1, 3, 2]) == pytest.approx(dcg / ideal)
    assert ndcg([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    # Reversed: relevances 0, 10, 20 in that order.
    assert ndcg([3, 2, 1], [10, 20, 30]) == pytest.approx((10 / math.log2(3) + 20 / 2) / (20 + 10 / math.log2(3)))


def test_ndcg_ties_share_their_places() -> None:
    # x ties the first two: their relevances 2 and 0 share the discounts of places 1 and 2.
    shared = (1 + 1 / math.log2(3)) / 2
    expected = (2 * shared + 0 * shared + 1 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert ndcg([5, 5, 1], [3, 1, 2]) == pytest.approx(expected)
    assert ndcg([5, 5, 1], [1, 3, 2]) == pytest.approx(expected)


def test_rbo_hand_example() -> None:
    # Orders 0,1,2 and 1,0,2: agreement 0, 1, 1 at depths 1..3. With p = 0.5:
    # (1-p)/p * (0*0.5 + 1*0.25 + 1*0.125) + 1 * 0.5**3 = 0.375 + 0.125.
    assert rbo([3, 2, 1], [2, 3, 1], p=0.5) == pytest.approx(0.5)
    assert rbo([5, 4, 3, 2, 1], [50, 40, 30, 20, 10]) == pytest.approx(1.0)
    # Reversed orders of 4 with p = 0.5: agreement 0, 0, 2/3, 1.
    assert rbo([4, 3, 2, 1], [1, 2, 3, 4], p=0.5) == pytest.approx(1.0 * (2 / 3 * 0.125 + 1 * 0.0625) + 0.0625)


def test_undefined_cases_are_none() -> None:
    for name, measure in MEASURES.items():
        assert measure([0.5], [0.1]) is None, name
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    assert ndcg([1, 2, 3], [2, 2, 2]) is None
    with pytest.raises(ValueError):
        spearman([1, 2], [1, 2, 3])


def test_against_scipy_on_random_inputs() -> None:
    from scipy.stats import kendalltau, pearsonr, spearmanr

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=9), rng.normal(size=9)
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic)
    assert kendall(x, y) == pytest.approx(kendalltau(x, y).statistic)
    assert pearson(x, y) == pytest.approx(pearsonr(x, y).statistic)


def test_batch_matches_the_one_row_functions() -> None:
    from prb_tasks.stats.correlation import batch

    rng = np.random.default_rng(5)
    xs = rng.integers(0, 4, size=(60, 6)).astype(float)  # many ties
    ys = rng.normal(size=(60, 6))
    ys[3] = 1.0  # no spread: undefined
    xs[7, 2] = np.nan  # a missing value: undefined
    for name, measure in MEASURES.items():
        got = batch(name, xs, ys)
        for row in range(len(xs)):
            want = None if row == 7 else measure(xs[row], ys[row])
            if want is None:
                assert np.isnan(got[row]), (name, row)
            else:
                assert got[row] == pytest.approx(want), (name, row)

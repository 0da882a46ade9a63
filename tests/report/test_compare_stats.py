"""The statistics of ``prb compare`` on constructed inputs with known answers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.report.ladder import ladders
from prb_tasks.report.outcomes import Entry, setting_of
from prb_tasks.report.pairwise import compare_all, compare_two, kappa_matrix, ranking
from prb_tasks.report.runs import Family, Run
from prb_tasks.stats.pairs import bootstrap, cohen_kappa, holm, mcnemar


def exact_two_sided(b: int, c: int) -> float:
    """Two-sided exact binomial p-value with p = 1/2, from the definition."""
    n, k = b + c, min(b, c)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


def entry(eid: str, scores: dict[str, float], label: str | None = None, variant: str = "both",
          family: str = "fam", kind: str = "judge") -> Entry:
    """An entry with given per-pair scores; the subset is the key's prefix."""
    fam = Family(family, [family], kind, "sample")
    run = Run(Path("results_x.json"), label or eid, "test", {}, [fam])
    keys = list(scores)
    e = Entry(eid, label or eid, kind, run, fam, setting_of(family), variant)
    e.keys = keys
    e.subset = [k.split("/")[0] for k in keys]
    e.score = np.array([scores[k] for k in keys], dtype=float)
    return e


# --------------------------------------------------------------------------- McNemar


@pytest.mark.parametrize("n,k", [(36, 1), (36, 5), (100, 12), (2830, 20)])
def test_models_differing_on_k_of_n_pairs_give_the_exact_mcnemar_p(n: int, k: int) -> None:
    first = np.ones(n)
    second = np.ones(n)
    second[:k] = 0.0  # the second model is wrong on exactly k pairs the first gets right
    test = mcnemar(first, second)
    assert (test.first_better, test.second_better) == (k, 0)
    assert test.p_value == pytest.approx(min(1.0, 2 * 0.5 ** k), rel=1e-12)


@pytest.mark.parametrize("b,c", [(7, 3), (3, 7), (10, 10), (25, 12), (0, 0)])
def test_mcnemar_with_discordance_both_ways(b: int, c: int) -> None:
    first = np.array([1.0] * b + [0.0] * c + [1.0] * 40 + [0.0] * 13)
    second = np.array([0.0] * b + [1.0] * c + [1.0] * 40 + [0.0] * 13)
    test = mcnemar(first, second)
    assert (test.first_better, test.second_better) == (b, c)
    assert test.p_value == pytest.approx(exact_two_sided(b, c), rel=1e-12)
    assert exact_two_sided(7, 3) == pytest.approx(352 / 1024)


def test_mcnemar_on_both_order_scores_counts_pairs_not_judgments() -> None:
    # Scores 0 / 0.5 / 1: a pair is discordant when the two models' scores differ.
    first = np.array([1.0, 0.5, 0.5, 1.0, 0.0])
    second = np.array([0.5, 0.5, 0.0, 0.0, 0.0])
    test = mcnemar(first, second)
    assert (test.first_better, test.second_better) == (3, 0)
    assert test.p_value == pytest.approx(0.25)


def test_exact_test_on_mixed_differences_matches_enumerating_every_sign_flip() -> None:
    rng = np.random.default_rng(3)
    first = rng.choice([0.0, 0.5, 1.0], size=40)
    second = rng.choice([0.0, 0.5, 1.0], size=40)
    diffs = (first - second)[first != second]
    assert len(diffs) <= 30 and {0.5, 1.0} <= set(np.abs(diffs).tolist())
    # Brute force over 2^len(diffs) sign patterns, via the distribution of each magnitude's sum.
    observed = abs(diffs.sum())
    sums = np.zeros(1)
    for d in np.abs(diffs):
        sums = np.concatenate([sums + d, sums - d])
    expected = float(np.mean(np.abs(sums) >= observed - 1e-9))
    assert mcnemar(first, second).p_value == pytest.approx(expected, rel=1e-9)


def test_exact_test_and_ranking_follow_the_accuracy_difference() -> None:
    # A both-order judge against a 0/1 RM: more pairs favour the RM (by 1/2 each), but the
    # judge wins by a whole point on the others; the test and the ranking follow the
    # accuracy difference (+10 points for the judge), not the count of pairs.
    keys = [f"art/{i}" for i in range(200)]
    judge = entry("judge", dict(zip(keys, [1.0] * 60 + [0.5] * 80 + [0.0] * 60)))
    rm = entry("rm", dict(zip(keys, [0.0] * 60 + [1.0] * 80 + [0.0] * 60)), kind="scalar")
    test = mcnemar(judge.score, rm.score)
    assert (test.first_better, test.second_better) == (60, 80)
    assert test.p_value < 0.05
    (c,) = compare_all([judge, rm])
    assert c.diff.value == pytest.approx(0.1) and c.significant
    rows = ranking({"judge": 0.5, "rm": 0.4}, [c])
    assert rows[0].better_than == ["rm"] and rows[1].worse_than == ["judge"]


# --------------------------------------------------------------------------- bootstrap


def test_intervals_shrink_as_pairs_grow_and_are_reproducible() -> None:
    widths = []
    for n in (50, 500, 5000):
        values = np.array([1.0] * (6 * n // 10) + [0.0] * (4 * n // 10))
        interval = bootstrap([values])
        assert interval is not None and interval.value == pytest.approx(0.6)
        assert interval.low < 0.6 < interval.high
        widths.append(interval.high - interval.low)
        assert bootstrap([values]) == interval  # fixed seed
    assert widths[0] > widths[1] > widths[2] > 0
    # The binomial standard error 0.49/sqrt(n) sets the width: ~4 of them for 95%.
    assert widths[1] == pytest.approx(3.92 * math.sqrt(0.24 / 500), rel=0.15)


def test_resampling_stays_within_subsets() -> None:
    # All of one subset right, all of the other wrong: a within-subset bootstrap has no
    # variance left, a pooled one would.
    interval = bootstrap([np.ones(10), np.zeros(30)])
    assert (interval.value, interval.low, interval.high) == pytest.approx((0.25, 0.25, 0.25))
    macro = bootstrap([np.ones(10), np.zeros(30)], macro=True)
    assert macro.value == pytest.approx(0.5) and macro.low == pytest.approx(0.5)


def test_pairs_right_in_one_order_only_have_no_pair_level_variance() -> None:
    interval = bootstrap([np.full(36, 0.5)])
    assert (interval.low, interval.high) == (0.5, 0.5)


def test_paired_difference_interval() -> None:
    rng = np.random.default_rng(1)
    a = (rng.random(1000) < 0.7).astype(float)
    b = a.copy()
    flip = rng.choice(1000, 100, replace=False)
    b[flip] = 0.0  # b loses up to 100 pairs a gets right
    keys = [f"s{i % 3}/{i}" for i in range(1000)]
    first, second = entry("a", dict(zip(keys, a))), entry("b", dict(zip(keys, b)))
    c = compare_two(first, second)
    true = a.mean() - b.mean()
    assert c.shared == 1000 and c.diff.value == pytest.approx(true)
    assert 0 < c.diff.low < true < c.diff.high
    # Paired: far narrower than two independent intervals would suggest.
    assert c.diff.high - c.diff.low < 0.04


# --------------------------------------------------------------------------- agreement, correction, ranking


def test_kappa_known_values() -> None:
    same = ["right", "wrong", "split", "right", "wrong"]
    assert cohen_kappa(same, same) == 1.0
    assert cohen_kappa(["a", "b"] * 10, ["b", "a"] * 10) == pytest.approx(-1.0)
    # Textbook table [[20, 5], [10, 15]]: observed 0.7, chance 0.5 -> 0.4.
    x = ["y"] * 25 + ["n"] * 25
    y = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(x, y) == pytest.approx(0.4)
    assert cohen_kappa([], []) is None


def test_kappa_matrix_of_identical_models_is_one() -> None:
    scores = {f"art/{i}": float(i % 3 == 0) for i in range(30)}
    matrix = kappa_matrix([entry("a", scores), entry("b", dict(scores))])
    assert matrix == [[1.0, 1.0], [1.0, 1.0]]


def test_holm_adjustment() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # step-down keeps the order of p-values
    assert holm([0.001, 0.2, 0.04, 0.3]) == pytest.approx([0.004, 0.4, 0.12, 0.4])
    assert holm([]) == []


def test_ranking_marks_only_corrected_significant_differences() -> None:
    keys = [f"art/{i}" for i in range(200)]
    best = entry("best", {k: 1.0 for k in keys})
    mid = entry("mid", {k: float(i >= 20) for i, k in enumerate(keys)})          # 20 pairs worse than best
    close = entry("close", {k: float(i >= 22) for i, k in enumerate(keys)})      # 2 pairs worse than mid
    comparisons = compare_all([best, mid, close])
    by = {(c.first, c.second): c for c in comparisons}
    assert by[("best", "mid")].significant and by[("best", "close")].significant
    assert not by[("mid", "close")].significant  # 0.9 vs 0.89 on 200 pairs is noise
    # Three tests: Holm multiplies the smallest p-value by 3.
    assert by[("best", "close")].p_adjusted == pytest.approx(3 * by[("best", "close")].p_value)
    rows = ranking({"best": 1.0, "mid": 0.9, "close": 0.89}, comparisons)
    assert [r.id for r in rows] == ["best", "mid", "close"]
    assert sorted(rows[0].better_than) == ["close", "mid"] and rows[1].better_than == []


def test_comparisons_use_only_shared_pairs() -> None:
    full = entry("full", {f"art/{i}": 1.0 for i in range(100)})
    limited = entry("limited", {f"art/{i}": 1.0 for i in range(40)} | {"art/x": 0.0})
    c = compare_two(full, limited)
    assert c.shared == 40 and c.diff.value == 0.0 and c.p_value == 1.0


def test_ladder_orders_variants_and_measures_gains_on_shared_pairs() -> None:
    keys = [f"art/{i}" for i in range(60)]
    rungs = [
        entry("o", {k: 1.0 for k in keys}, label="judge", variant="oracle", family="x_oracle"),
        entry("q", {k: float(i < 30) for i, k in enumerate(keys)}, label="judge", variant="both", family="x"),
        entry("p", {k: float(i < 45) for i, k in enumerate(keys[:50])}, label="judge", variant="profile",
              family="x_profile"),
        entry("other", {k: 1.0 for k in keys}, label="another judge", variant="both", family="x"),
    ]
    (ladder,) = ladders(rungs)
    assert ladder.label == "judge" and ladder.pairs == 50
    assert [r.variant for r in ladder.rungs] == ["both", "profile", "oracle"]
    assert ladder.rungs[0].acc.value == pytest.approx(30 / 50)
    assert ladder.rungs[1].gain.value == pytest.approx(15 / 50)
    assert ladder.rungs[2].gain.value == pytest.approx(20 / 50) and ladder.rungs[2].p_value < 1e-4

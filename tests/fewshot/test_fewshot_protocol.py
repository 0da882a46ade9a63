"""The few-shot protocol: the split, the shipped baselines on constructed users, the metrics."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from prb_tasks.fewshot import registry
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.metrics import area_under_curve, curve_area, k_curve
from prb_tasks.fewshot.split import KS, make_split, split_digest, split_users
from tests.fewshot_fixture import constructed


def _toy(n_users: int = 30, lengths=None) -> dict[str, list[str]]:
    lengths = lengths or [30] * n_users
    return {f"user{u}": [f"user{u}/{i}" for i in range(n)] for u, n in enumerate(lengths)}


def test_seen_and_unseen_users_are_disjoint_and_cover_everyone():
    data = _toy(57)
    split = make_split(data, unseen_share=0.4, seed=5)
    seen, unseen = set(split.seen), {u.user_id for u in split.unseen}
    assert not seen & unseen
    assert seen | unseen == set(data)
    assert len(unseen) == round(57 * 0.4)


def test_query_never_in_any_support_set_and_supports_are_nested():
    split = make_split(_toy(40), seed=1)
    for user in split.unseen:
        queries = set(user.queries)
        assert len(queries) == split.queries
        previous: set[str] = set()
        for k in KS:
            support = set(user.support(k))
            assert len(support) == k
            assert not support & queries
            assert previous <= support  # nested: k-shot contains the smaller support sets
            previous = support


def test_same_seed_same_split_whatever_the_order_and_hash_seed():
    data = _toy(50)
    shuffled = dict(reversed(list(data.items())))
    a, b = make_split(data, seed=7), make_split(shuffled, seed=7)
    assert split_digest(a, str) == split_digest(b, str)
    assert split_digest(make_split(data, seed=8), str) != split_digest(a, str)
    # Another interpreter with another hash seed makes the same split.
    code = ("from prb_tasks.fewshot.split import make_split, split_digest;"
            "d={f'user{u}':[f'user{u}/{i}' for i in range(30)] for u in range(50)};"
            "print(split_digest(make_split(d, seed=7), str))")
    for hash_seed in ("1", "12345"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": hash_seed, "PATH": ""})
        assert out.stdout.strip() == split_digest(a, str)


def test_split_is_the_same_on_every_machine():
    # PCG64 streams are specified bit for bit, so this permutation is a fixed fact.
    seen, unseen = split_users([f"u{i}" for i in range(10)], unseen_share=0.5, seed=0)
    order = np.random.default_rng(0).permutation(10)
    assert unseen == sorted(sorted(f"u{i}" for i in range(10))[j] for j in order[:5])
    assert unseen == ["u2", "u3", "u4", "u6", "u7"]  # recorded once; numpy guarantees the stream


def test_users_with_too_few_pairs_are_reported_per_k():
    lengths = [30] * 10 + [8 + 3] * 10 + [5] * 10
    split = make_split(_toy(30, lengths), unseen_share=0.99, seed=0)
    assert len(split.unseen) == 29
    short_users = {u.user_id for u in split.unseen if len(u.queries) < 8}
    three = {u.user_id for u in split.unseen if len(u.pool) == 3}
    assert split.short[0] == tuple(sorted(short_users))
    assert set(split.short[4]) == short_users | three
    assert all(u.user_id not in split.short[16] for u in split.evaluated(16))
    lines = split.shortfall_lines()
    assert lines[0].startswith("k=0: ") and "need 8 queries + 0 support" in lines[0]


def test_oracle_scores_one_on_clear_pairs():
    data = constructed()
    outcomes = run(registry.build("oracle", {}), data)
    assert outcomes and all(o.correct for o in outcomes)
    assert {o.k for o in outcomes} == set(KS)


def _accuracy_by_k(method: str, data, **options) -> dict[int, float]:
    return {p.k: p.accuracy.value for p in k_curve((o.k, o.user_id, o.correct)
                                                   for o in run(registry.build(method, options), data))}


def test_lowrank_approaches_the_oracle_as_k_grows():
    data = constructed()
    curve = _accuracy_by_k("lowrank", data, rank=2)
    assert curve[16] > curve[0] + 0.1
    assert curve[16] >= 0.93
    assert curve[16] >= curve[4] >= curve[1] - 0.02


def test_similar_users_improves_with_k():
    curve = _accuracy_by_k("similar_users", constructed())
    assert curve[16] > curve[0] + 0.05


@pytest.mark.parametrize("method", ["lowrank", "similar_users"])
def test_k0_equals_nonpersonalized(method):
    data = constructed()
    base = {(o.user_id, o.key): (o.chosen, o.rejected) for o in run(registry.build("nonpersonalized", {}), data)}
    mine = [o for o in run(registry.build(method, {}), data) if o.k == 0]
    assert mine
    for o in mine:
        assert (o.chosen, o.rejected) == pytest.approx(base[(o.user_id, o.key)])


def test_run_at_some_ks_gives_those_ks_outcomes_unchanged():
    data = constructed(n_users=40)
    every = run(registry.build("lowrank", {}), data)
    some = run(registry.build("lowrank", {}), data, ks=[8, 0])
    assert {o.k for o in some} == {0, 8}
    assert some == [o for o in every if o.k in (0, 8)]
    with pytest.raises(ValueError, match=r"k = \[3\] is not a support size of this split"):
        run(registry.build("lowrank", {}), data, ks=[3])


def test_nonpersonalized_is_flat_over_k():
    curve = _accuracy_by_k("nonpersonalized", constructed())
    assert len(set(curve.values())) == 1


def test_area_under_curve():
    assert area_under_curve({0: 0.5, 1: 1.0}) == pytest.approx(0.75)
    assert area_under_curve({k: 0.6 for k in KS}) == pytest.approx(0.6)
    points = k_curve([(0, "a", 1), (0, "b", 0), (16, "a", 1), (16, "b", 1)], iters=200)
    assert [p.k for p in points] == [0, 16] and points[0].users == 2
    assert points[0].accuracy.low <= 0.5 <= points[0].accuracy.high
    assert curve_area(points) == pytest.approx(0.75)


def test_unknown_method_and_option_are_one_line():
    with pytest.raises(registry.MethodError, match=r"unknown method 'lowrnk' \(did you mean 'lowrank'\?\); "
                                                       "available: nonpersonalized"):
        registry.resolve("lowrnk")
    with pytest.raises(registry.MethodError, match="has no option rnk; its options: rank, l2, seen_l2"):
        registry.build("lowrank", {"rnk": 2})
    with pytest.raises(registry.MethodError, match="rank must be at least 1"):
        registry.build("lowrank", {"rank": 0})


def test_newton_step_is_the_same_solved_either_way():
    from prb_tasks.fewshot.linear import _newton_step

    rng = np.random.default_rng(0)
    z, curvature, grad = rng.normal(size=(5, 40)), rng.uniform(0.01, 0.25, size=5), rng.normal(size=40)
    direct = np.linalg.solve((z * curvature[:, None]).T @ z + 0.7 * np.eye(40), grad)
    assert np.allclose(_newton_step(z, curvature, 0.7, grad), direct)
    tall, weights = rng.normal(size=(50, 6)), rng.uniform(0.01, 0.25, size=50)
    direct = np.linalg.solve((tall * weights[:, None]).T @ tall + np.eye(6), grad[:6])
    assert np.allclose(_newton_step(tall, weights, 1.0, grad[:6]), direct)


def test_option_values_are_converted_to_the_annotated_types():
    method = registry.build("lowrank", {"rank": "3", "l2": "0.5"})
    assert (method.rank, method.l2) == (3, 0.5)
    with pytest.raises(registry.MethodError,
                       match=r"method 'lowrank' option rank=abc: expected a whole number") as info:
        registry.build("lowrank", {"rank": "abc"})
    # Said once, not wrapped in a second "prb-method: method 'lowrank': " prefix.
    assert str(info.value) == "prb-method: method 'lowrank' option rank=abc: expected a whole number"
    with pytest.raises(registry.MethodError, match=r"option rank=2.5: expected a whole number"):
        registry.build("lowrank", {"rank": 2.5})


def test_aukc_is_taken_over_the_k_points_that_exist_and_says_which():
    from prb_tasks.fewshot.metrics import aukc
    from prb_tasks.scoring.fewshot import k_curve_line

    nan = float("nan")
    # Users evaluated at k = 0, 1, 2 only (a --limit run): the area is over those three.
    items = [(k, f"u{u}", float((u + k) % 3 != 0)) for k in (0, 1, 2) for u in range(6)]
    assert aukc(items) == pytest.approx(area_under_curve({0: 2 / 3, 1: 2 / 3, 2: 2 / 3}))
    row = {"acc_k0,none": 0.75, "acc_k1,none": 0.8, "acc_k2,none": 0.9, "acc_k4,none": nan, "acc_k8,none": nan,
           "acc_k16,none": nan, "aukc,none": 0.812}
    line = k_curve_line("personalized_custom_fewshot", row)
    assert "k=2 90.0, k=4 -, k=8 -" in line and "nan" not in line, line
    assert line.endswith("; aukc 81.2 over k = 0, 1, 2 only (no result at k = 4, 8, 16; not comparable with a "
                         "whole curve's)"), line
    whole = {f"acc_k{k},none": 0.8 for k in (0, 1, 2, 4, 8, 16)} | {"aukc,none": 0.8}
    assert k_curve_line("x", whole).endswith("; aukc 80.0")
    assert k_curve_line("x", {"acc_k0,none": nan, "aukc,none": nan}).endswith("; aukc - (no k point has a result)")


def test_the_k_curve_gets_lines_of_its_own_that_fit_120_columns_and_keep_each_point_whole():
    from prb_tasks.scoring.fewshot import k_curve_line, k_curve_lines

    ks = (0, 1, 2, 4, 8, 16)
    row = {f"acc_k{k},none": 0.6 + k / 100 for k in ks} | {f"acc_k{k}_low,none": 0.55 for k in ks}
    row |= {f"acc_k{k}_high,none": 0.651 for k in ks} | {"aukc,none": 0.63}
    name = "personalized_custom_fewshot_judge_similar"
    lines = k_curve_lines(name, row)
    assert len(k_curve_line(name, row)) > 120  # before: one line of 150 columns and more
    assert lines[0] == f"{name} k-curve, acc % (95% CI over users):"
    assert all(len(line) <= 120 and line.startswith("  k=") for line in lines[1:]), lines
    points = " ".join(line.strip() for line in lines[1:])
    assert points == k_curve_line(name, row).split(": ", 1)[1]  # the same text, broken between points only
    for line in lines[1:]:  # every line holds whole points: "k=N acc (low-high)"
        cells = [c.strip() for c in line.split(";")[0].split(",") if c.strip()]
        assert all(c.startswith("k=") and c.endswith(")") for c in cells), line
    assert k_curve_lines("x", {"acc,none": 0.5}) == []

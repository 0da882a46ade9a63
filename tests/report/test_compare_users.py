"""``prb compare`` on data with users: intervals and tests resample users, not pairs."""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.report.outcomes import Entry, design_of, setting_of
from prb_tasks.report.pairwise import compare_two
from prb_tasks.report.runs import Family, Run
from prb_tasks.report.summary import summarize
from prb_tasks.stats.pairs import ITERS, SEED
from tests.runner import run_cli

TALKATIVE = 60  # pairs of the one user who talks most


def entry(eid: str, scores: list[float], users: list[str | None], subsets: list[str] | None = None) -> Entry:
    """A scalar-RM entry with the given per-pair scores and users (one judgment per pair)."""
    fam = Family("fam", ["fam"], "scalar", "local:x")
    run = Run(Path("results_x.json"), eid, "test", {}, [fam])
    e = Entry(eid, eid, "scalar", run, fam, setting_of("fam"), "scalar")
    e.keys = [f"p{i}" for i in range(len(scores))]
    e.subset = subsets or ["custom"] * len(scores)
    e.user = list(users)
    e.category = [None] * len(scores)
    e.tags = [()] * len(scores)
    e.score = np.array(scores, dtype=float)
    e.j_pair = np.arange(len(scores))
    e.j_pick = np.where(e.score == 1.0, 1, 0)
    e.j_correct = e.score.copy()
    e.j_outcome = ["verdict"] * len(scores)
    e.j_pos = [None] * len(scores)
    e.j_letter = [None] * len(scores)
    e.w_chosen = np.full(len(scores), np.nan)
    e.w_rejected = np.full(len(scores), np.nan)
    e.s_chosen = e.score.copy()
    e.s_rejected = np.zeros(len(scores))
    return e


def lopsided() -> tuple[list[float], list[str]]:
    """One user with 60 pairs, all right; ten users with 3 pairs each, one right in three."""
    scores = [1.0] * TALKATIVE
    users = ["talker"] * TALKATIVE
    for u in range(10):
        scores += [1.0, 0.0, 0.0]
        users += [f"quiet{u}"] * 3
    return scores, users


def hand_cluster_bootstrap(scores: list[float], users: list[str], seed: int, iters: int) -> tuple[float, float]:
    """The documented recipe, written out: users numbered by first appearance; each
    resample draws as many user numbers as there are users, with replacement, and pools
    every pair of every drawn user."""
    order = list(dict.fromkeys(users))
    pairs_of = {u: [s for s, owner in zip(scores, users) if owner == u] for u in order}
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(iters):
        picked = rng.integers(0, len(order), size=len(order))
        pooled = [s for i in picked for s in pairs_of[order[i]]]
        means.append(sum(pooled) / len(pooled))
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def test_cluster_interval_is_wider_than_the_pair_interval_and_matches_a_hand_run():
    scores, users = lopsided()
    by_user = summarize(entry("m", scores, users))
    by_pair = summarize(entry("m", scores, [None] * len(scores)))
    assert by_user.resampled == "11 users" and by_pair.resampled == "90 pairs"
    assert by_user.acc.value == by_pair.acc.value == pytest.approx(70 / 90)
    assert by_user.acc.high - by_user.acc.low > 2 * (by_pair.acc.high - by_pair.acc.low)
    low, high = hand_cluster_bootstrap(scores, users, SEED, ITERS)
    assert by_user.acc.low == pytest.approx(low, abs=1e-12)
    assert by_user.acc.high == pytest.approx(high, abs=1e-12)
    # Per-user (macro) accuracy beside micro: (1 + 10 * 1/3) / 11.
    assert by_user.acc_user.value == pytest.approx((1 + 10 / 3) / 11)
    assert by_pair.acc_user is None


def test_a_win_resting_on_one_talkative_user_is_not_significant():
    scores, users = lopsided()
    worse = list(scores)
    worse[:30] = [0.0] * 30  # the second model fails on half of the talker's pairs, nowhere else
    with_users = compare_two(entry("a", scores, users), entry("b", worse, users))
    without = compare_two(entry("a", scores, [None] * len(scores)), entry("b", worse, [None] * len(scores)))
    assert (with_users.first_better, with_users.second_better) == (30, 0)
    assert without.p_value == pytest.approx(2 * 0.5 ** 30)  # McNemar over pairs: "highly significant"
    # Over users only one user differs: its two signs are equally extreme, p = 1.
    assert with_users.p_value == 1.0
    assert with_users.resampled == "11 users" and without.resampled == "90 pairs"
    assert with_users.diff.low <= 0.0 < without.diff.low


def test_user_sign_flip_is_exact_over_every_sign_pattern():
    rng = np.random.default_rng(7)
    users = [f"u{rng.integers(0, 9)}" for _ in range(70)]
    first = rng.choice([0.0, 1.0], size=70, p=[0.3, 0.7])
    second = rng.choice([0.0, 1.0], size=70, p=[0.5, 0.5])
    test = design_of(entry("a", list(first), users)).paired_test(first, second)
    totals = {}
    for u, d in zip(users, first - second):
        totals[u] = totals.get(u, 0.0) + d
    observed = abs(sum(totals.values()))
    flips = [abs(sum(s * t for s, t in zip(signs, totals.values()))) for signs in product((1, -1), repeat=len(totals))]
    expected = sum(f >= observed - 1e-9 for f in flips) / len(flips)
    assert test.p_value == pytest.approx(expected, abs=1e-12)
    assert 0.0 < test.p_value < 1.0


def test_many_users_use_seeded_random_flips():
    rng = np.random.default_rng(11)
    users = [f"u{i // 2}" for i in range(200)]  # 100 users, two pairs each
    first = rng.choice([0.0, 1.0], size=200, p=[0.2, 0.8])
    second = rng.choice([0.0, 1.0], size=200, p=[0.5, 0.5])
    design = design_of(entry("a", list(first), users))
    p = design.paired_test(first, second).p_value
    assert p == design.paired_test(first, second).p_value  # fixed seed: reproducible
    assert p < 0.001  # a clear difference spread over many users stays significant


def test_pairs_without_users_keep_the_pair_bootstrap_within_subsets():
    scores = [1.0, 0.0, 1.0, 1.0] * 9
    subsets = ["art"] * 12 + ["lifestyle"] * 24
    e = entry("m", scores, [None] * 36, subsets)
    s = summarize(e)
    assert s.resampled == "36 pairs"
    from prb_tasks.stats.pairs import bootstrap

    expected = bootstrap([np.array(scores[:12]), np.array(scores[12:])])
    assert (s.acc.low, s.acc.high) == (expected.low, expected.high)


def test_double_game_in_the_report_from_both_order_judgments():
    e = entry("j", [1.0, 0.5, 0.5, 0.0], ["u1", "u1", "u2", "u3"])
    e.kind = "judge"
    e.family.kind = "judge"
    # Two judgments per pair: (pick with chosen in A, pick with chosen in B); -1 = no verdict.
    picks = {0: (1, 1), 1: (1, 0), 2: (1, -1), 3: (0, 0)}
    e.j_pair = np.array([p for p in picks for _ in range(2)])
    e.j_pick = np.array([x for p in picks.values() for x in p])
    e.j_correct = (e.j_pick == 1).astype(float)
    e.j_pos = ["A", "B"] * 4
    e.j_letter = ["A", "B", "A", "A", "A", None, "B", "A"]
    e.j_outcome = ["verdict"] * 5 + ["unparsed"] + ["verdict"] * 2
    e.w_chosen = np.full(4, np.nan)
    e.w_rejected = np.full(4, np.nan)
    s = summarize(e)
    # Nets: +2, 0 (inconsistent), +1 (right and no verdict), -2: two of four pairs count.
    assert s.double_game.value == 0.5
    assert s.metrics["double_game"] == 0.5
    assert s.metrics["acc_pair"] == 0.25
    assert [(g.value, g.pairs, g.acc) for g in s.double_game_subsets] == [("custom", 4, 0.5)]


def test_compare_says_it_resampled_users_on_custom_data(tmp_path):
    runs = tmp_path / "runs"
    for scorer in ("length", "bm25"):
        proc = run_cli(["eval", "--model", "prb-rm", "--model_args", f"scorer={scorer}",
                        "--tasks", "personalized_custom_example_scalar_history",
                        "--output_path", str(runs / scorer), "--log_samples"], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_cli(["compare", str(runs), "--format", "json"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    section = report["sections"][0]
    # The bundled example: 6 users, 20 preferences.
    assert {m["resampled"] for m in section["models"]} == {"6 users"}
    assert all(m["acc_user"] is not None for m in section["models"])
    assert section["comparisons"][0]["resampled"] == "6 users"
    assert "users" in report["method"]["interval"]
    text = run_cli(["compare", str(runs)], cwd=tmp_path)
    assert text.returncode == 0, text.stderr[-3000:]
    assert "6 users" in text.stdout and "per-user %" in text.stdout

"""``prb validity``'s headline: the measured correlation beside the published ranges, and the
share of model pairs whose order flips downstream (planted orders and a null)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.stats.correlation import kendall
from prb_tasks.stats.flips import flips
from tests.report.test_validity_stats import model, run_validity


def test_flips_count_the_planted_swaps():
    acc = np.array([0.5, 0.6, 0.7, 0.8, 0.9])
    assert flips(acc, acc * 2).flipped == 0  # null: the same order finds nothing
    reversed_ = flips(acc, -acc)
    assert (reversed_.flipped, reversed_.ordered, reversed_.pairs) == (10, 10, 10) and reversed_.share == 1.0
    swapped = flips(acc, np.array([1.0, 2.0, 4.0, 3.0, 5.0]))  # one planted swap of neighbours
    assert swapped.flipped == 1 and swapped.share == pytest.approx(0.1)


def test_flips_leave_ties_unordered_and_match_kendall_without_ties():
    tied = flips(np.array([0.5, 0.5, 0.7]), np.array([3.0, 1.0, 2.0]))
    assert (tied.flipped, tied.ordered, tied.pairs) == (1, 2, 3)
    rng = np.random.default_rng(2)
    a, b = rng.random(8), rng.random(8)
    assert flips(a, b).share == pytest.approx((1 - kendall(a, b)) / 2)


def test_headline_names_the_published_ranges_the_interval_over_models_and_the_flips(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    # Five models; accuracy orders them m0 < ... < m4, the gain swaps m3 and m4 (planted).
    gains = [0.0, 0.1, 0.2, 0.4, 0.3]
    models = [model(f"m{i}", [1.0] * (i + 1) + [0.0] * (5 - i), [gains[i]] * 6) for i in range(5)]
    code, out, err = run_validity(monkeypatch, capsys, models, "--out", str(tmp_path / "v"), "--no-charts")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "measured: kendall 0.80 (95% CI over 5 models" in flat and "200 resamples of the models" in flat
    assert "published: kendall 0.08-0.31" in flat and "arXiv 2512.23067" in flat
    assert "published: spearman 0.26-0.37" in flat and "Personalized RewardBench" in flat
    assert "0.04 mean, 57% near zero or negative" in flat and "115 Chatbot Arena users" in flat
    assert "order flips downstream: 1 of the 10 model pairs" in flat and "(10%; 10 pairs in all)" in flat
    # The headline's sentences are wrapped to a terminal's width (the measures' table is not).
    headline = out[out.index("measured:"):out.index("model ")]
    assert headline.count("\n") >= 6 and all(len(line) <= 120 for line in headline.splitlines())
    written = json.loads((tmp_path / "v" / "validity.json").read_text(encoding="utf-8"))
    assert written["headline"]["flips"] == {"flipped": 1, "ordered": 10, "pairs": 10, "share": 0.1}
    assert {p["value"] for p in written["headline"]["published"]} >= {"0.08-0.31", "0.26-0.37"}
    html = (tmp_path / "v" / "validity.html").read_text(encoding="utf-8")
    assert "How much accuracy predicts" in html and "order flips downstream: 1 of the 10" in html
    assert "How much accuracy predicts" in (tmp_path / "v" / "validity.md").read_text(encoding="utf-8")

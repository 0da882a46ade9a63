"""``prb validity``'s statistics and warnings on constructed models (the end-to-end run is in
test_bon_validity_e2e.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.report.validity import Model, Side, _base_rm_warnings, estimates
from prb_tasks.stats.correlation import spearman
from tests.runner import run_cli


def model(label: str, acc: list[float], gain: list[float]) -> Model:
    bench, down = Side("bench"), Side("down")
    for i, value in enumerate(acc):
        bench.add(f"q{i}", value)
    for i, value in enumerate(gain):
        down.add(f"q{i}", value)
    return Model(label, bench, down)


def noisy_models(questions: int, seed: int = 0) -> list[Model]:
    """Six models whose accuracy and gain both grow with a hidden skill, plus noise per question."""
    rng = np.random.default_rng(seed)
    models = []
    for m in range(6):
        skill = m / 5
        acc = (rng.random(questions) < 0.5 + 0.4 * skill).astype(float).tolist()
        gain = (0.5 * skill + rng.normal(0, 0.6, questions)).tolist()
        models.append(model(f"m{m}", acc, gain))
    return models


def test_point_values_and_intervals() -> None:
    models = noisy_models(40)
    out = estimates(models, iters=300, seed=1)
    accs = [m.benchmark.mean for m in models]
    gains = [m.downstream.mean for m in models]
    assert out["spearman"].value == pytest.approx(spearman(accs, gains))
    for name, estimate in out.items():
        assert estimate.by_questions is not None and estimate.by_models is not None, name
        assert estimate.by_questions.low <= estimate.by_questions.high
        assert -1.0 - 1e-9 <= estimate.by_models.low <= estimate.by_models.high <= 1.0 + 1e-9
    # Ten times the questions: the interval over questions narrows.
    wide = out["pearson"].by_questions
    narrow = estimates(noisy_models(400), iters=300, seed=1)["pearson"].by_questions
    assert narrow.high - narrow.low < wide.high - wide.low


def test_identical_questions_give_a_point_interval() -> None:
    # Every question gives the same values: resampling questions changes nothing.
    models = [model(f"m{m}", [m / 4] * 10, [m / 2] * 10) for m in range(5)]
    out = estimates(models, iters=200, seed=1)
    assert out["kendall"].value == pytest.approx(1.0)
    interval = out["kendall"].by_questions
    assert (interval.low, interval.high) == (pytest.approx(1.0), pytest.approx(1.0))


def test_base_reward_models_are_flagged() -> None:
    flagged = _base_rm_warnings([model("prb-rm (scorer=hf, model=weqweasdas/RM-Gemma-2B)", [1], [1]),
                                 model("prb-rm (scorer=length)", [1], [1])])
    assert len(flagged) == 1 and "gemma_2b" in flagged[0] and "ceiling" in flagged[0]


def test_cli_without_runs_is_one_line(tmp_path: Path) -> None:
    proc = run_cli(["validity", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no benchmark run" in proc.stderr
    proc = run_cli(["validity", str(tmp_path / "missing")], cwd=tmp_path)
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def run_validity(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, models: list[Model],
                 *extra: str) -> tuple[int, str, str]:
    """``prb validity`` in this process on ``models`` (as if read from runs)."""
    from prb_tasks.cli import main
    from prb_tasks.report import validity as module

    monkeypatch.setattr(module, "load_models", lambda *a, **k: (list(models), "personalized_rb_sample",
                                                                  "personalized_rb_bon_contest"))
    code = main(["validity", "runs", "--iters", "200", *extra])
    out, err = capsys.readouterr()
    return code, out, err


NAN = float("nan")


@pytest.mark.parametrize("gains", [[[NAN] * 6, [NAN] * 6], [[NAN] * 6, [0.1, 0.2]]])
def test_nothing_graded_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                               gains: list[list[float]]) -> None:
    models = [model(f"judge {i}", [1, 0, 1, 1, 0, 1], gain) for i, gain in enumerate(gains)]
    code, out, err = run_validity(monkeypatch, capsys, models)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("prb validity: nothing to correlate: judge 0: none of its 6 gain values on down "
                          "could be computed") and "ungraded" in err and "a correlation needs 2" in err


def test_a_model_without_grades_is_left_out_and_a_thin_one_flagged(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    models = noisy_models(40)[:3] + [model("all ungraded", [1, 0] * 20, [NAN] * 40),
                                     model("mostly ungraded", [1, 0] * 20, [0.5, 0.1, 0.2] + [NAN] * 37)]
    code, out, err = run_validity(monkeypatch, capsys, models, "--out", str(tmp_path / "v"), "--no-charts")
    assert code == 0, err
    assert "prb validity: all ungraded: none of its 40 gain values on down could be computed; left out" in err
    assert "WARNING: mostly ungraded: only 3 of 40 gain values on down could be computed" in out
    assert "models: 4;" in out and "all ungraded" not in out
    written = json.loads((tmp_path / "v" / "validity.json").read_text(encoding="utf-8"))
    assert [m["label"] for m in written["models"]] == ["m0", "m1", "m2", "mostly ungraded"]


def test_an_undefined_correlation_is_written_as_null(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture) -> None:
    # Every model has the same gain: rank correlations are undefined, not a crash.
    models = [model(f"m{i}", [1, 0, 1, i % 2], [0.0, 0.0]) for i in range(3)]
    code, out, err = run_validity(monkeypatch, capsys, models, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["measures"]["spearman"]["value"] is None


def test_every_printed_line_fits_120_columns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                             tmp_path: Path) -> None:
    """Plain ``prb validity`` printed its ndcg row at 129 columns and long model names in full (a 123-column
    model table): the meanings wrap under their own column, long names are shortened as ``prb compare``
    shortens them, and the numbers stay in their columns."""
    from prb_tasks.common.terminal import WIDTH

    models = noisy_models(40)
    for i, m in enumerate(models):
        m.label = (f"prb-rm (scorer=hf, pretrained=Skywork/Skywork-Reward-V2-Llama-3.1-8B-{i}, batch_size=16, "
                   "max_length=4096)")
    code, out, err = run_validity(monkeypatch, capsys, models, "--out", str(tmp_path / "v"), "--no-charts")
    assert code == 0, err
    wide = [line for line in (out + err).splitlines() if len(line) > WIDTH]
    assert wide == []
    lines = out.splitlines()
    for name in ("spearman", "kendall", "pearson", "ndcg", "rbo"):
        (row,) = [line for line in lines if line.startswith(f"{name} ")]
        assert re.match(rf"{name} +-?\d\.\d{{3}} +\[", row), row
    assert "are the most accurate models the best downstream? (top-weighted, 1 = perfect)" in " ".join(out.split())
    # Each model keeps one row, numbered, with what tells it apart and its accuracy and gain.
    rows = [line for line in lines if re.match(r"\d+ ", line)]
    assert len(rows) == 6 and all(f"Skywork-Reward-V2-Llama-3.1-8B-{i}" in row for i, row in enumerate(rows))
    assert [float(row.split()[-2]) for row in rows] == pytest.approx([100 * m.benchmark.mean for m in models])
    # validity.json keeps the full names.
    written = json.loads((tmp_path / "v" / "validity.json").read_text(encoding="utf-8"))
    assert [m["label"] for m in written["models"]] == [m.label for m in models]

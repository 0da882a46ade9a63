"""``prb validity``'s statistics and warnings on constructed models (the end-to-end run is in
test_bon_validity_e2e.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from prb_tasks.report.validity import Model, Side, _base_rm_warnings, _estimates
from prb_tasks.scoring.correlation import spearman
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
    out = _estimates(models, iters=300, seed=1)
    accs = [m.benchmark.mean for m in models]
    gains = [m.downstream.mean for m in models]
    assert out["spearman"].value == pytest.approx(spearman(accs, gains))
    for name, estimate in out.items():
        assert estimate.by_questions is not None and estimate.by_models is not None, name
        assert estimate.by_questions.low <= estimate.by_questions.high
        assert -1.0 - 1e-9 <= estimate.by_models.low <= estimate.by_models.high <= 1.0 + 1e-9
    # Ten times the questions: the interval over questions narrows.
    wide = out["pearson"].by_questions
    narrow = _estimates(noisy_models(400), iters=300, seed=1)["pearson"].by_questions
    assert narrow.high - narrow.low < wide.high - wide.low


def test_identical_questions_give_a_point_interval() -> None:
    # Every question gives the same values: resampling questions changes nothing.
    models = [model(f"m{m}", [m / 4] * 10, [m / 2] * 10) for m in range(5)]
    out = _estimates(models, iters=200, seed=1)
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

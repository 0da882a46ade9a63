"""``prb eval --model prb-judge --model_args ...,logprobs=...`` on the bundled sample against
the fake server: soft accuracy, calibration and the coverage curve printed under the table,
within 120 columns, and the same numbers in the results file."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.scoring.soft import COVERAGES
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.e2e.test_judge_e2e import TASK, chosen_policy, run
from tests.runner import metric, read_results


@pytest.mark.slow
def test_prb_eval_prints_soft_accuracy_calibration_and_coverage(tmp_path: Path) -> None:
    # Right on every pair, sure of it at 0.6 on one pair in three and 0.95 on the rest.
    def confidence(prompt: str, reply: str) -> float:
        return 0.6 if len(prompt) % 3 == 0 else 0.95

    out = tmp_path / "out"
    with FakeLLMServer(chosen_policy(), confidence=confidence) as srv:
        proc = run(tmp_path, srv, tmp_path / "cache", out, "logprobs=4")
        assert {r["body"].get("top_logprobs") for r in srv.requests} == {4}
    results = read_results(out)
    soft, ece = metric(results, TASK, "soft_acc"), metric(results, TASK, "ece")
    assert metric(results, TASK, "soft_cover") == 1.0 and 0.6 < soft < 0.95
    # Always right, so the calibration error is 1 - mean confidence, and every coverage is 100%.
    assert ece == pytest.approx(1 - soft, abs=1e-4)
    assert all(metric(results, TASK, f"acc_cov{q}") == 1.0 for q in COVERAGES)
    lines = proc.stdout.splitlines()
    assert all(len(line) <= 120 for line in lines), max(lines, key=len)
    block = " ".join(line.strip() for line in lines if "soft verdicts" in line or line.startswith("  surest")
                     or "% 100.0" in line)
    assert f"{TASK} soft verdicts (100% of pairs have one in both orders): soft_acc {100 * soft:.1f}, " \
           f"ECE {100 * ece:.1f}" in block
    assert "20% 100.0" in proc.stdout and "100% 100.0" in proc.stdout
    header = next(line for line in lines if "soft_acc %" in line)
    assert "ece %" in header
    assert "acc_covQ: accuracy of the soft verdicts on the Q% of pairs the judge is surest of" in \
        " ".join(proc.stdout.split())


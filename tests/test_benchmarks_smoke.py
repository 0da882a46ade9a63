"""The benchmark suite keeps working: ``python -m benchmarks --smoke`` on a sliver of data.

Only that it runs and reports every section is checked, never a time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.runner import REPO, run_cli

SECTIONS = ("The fake judge server alone", "Judge throughput", "Full runs with a fast judge", "Fully cached re-run",
            "Start-up on the bundled sample", "Scalar reward models", "Scaling with the data")


@pytest.mark.slow
def test_smoke_run_writes_every_section(tmp_path: Path):
    out = tmp_path / "bench.md"
    proc = run_cli(["--smoke", "--out", str(out), "--work", str(tmp_path / "work")], cwd=REPO,
                   program=[sys.executable, "-m", "benchmarks"], timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = out.read_text(encoding="utf-8")
    assert "Smoke run" in report and "## Summary" in report
    for title in SECTIONS:
        assert f"## {title}" in report, title
    raw = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))["results"]
    assert {"server", "judge", "full", "cached", "startup", "rm_tiny", "rm_baselines", "scaling"} <= raw.keys()
    # The cached re-runs sent nothing; every full run judged every document.
    assert all(r["requests"] == 0 for entry in raw["cached"] for r in entry["reruns"])
    assert all(t["requests"] > 0 and t["first_request"] is not None for e in raw["full"] for t in e["trials"])

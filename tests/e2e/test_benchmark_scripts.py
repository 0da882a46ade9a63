"""Benchmark scripts outside the suite (``python -m benchmarks``) still run and report numbers.

Only that each runs on a sliver of synthetic data and prints its figures is checked, never a time.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.runner import REPO, run_cli

sys.path.insert(0, str(REPO / "benchmarks"))
from fullsize_data import generate


@pytest.fixture(scope="module")
def sliver(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """Synthetic data at 1% of the published size, and its number of rows."""
    folder = tmp_path_factory.mktemp("sliver")
    stats = generate(folder, seed=0, scale=0.01)
    return folder, sum(stats["rows"].values())


def test_bench_contexts_times_both_backends_prompt_work(sliver: tuple[Path, int], tmp_path: Path) -> None:
    data, rows = sliver
    proc = run_cli([str(REPO / "benchmarks" / "bench_contexts.py"), str(data), "--rounds", "2"], cwd=tmp_path,
                   program=[sys.executable])
    assert proc.returncode == 0, proc.stderr[-3000:]
    for backend in ("local-chat-completions", "prb-judge"):
        line = re.search(rf"^{backend}\s+(\d+) us per judgment \(rounds: (\d+), (\d+)\)$", proc.stdout, re.M)
        assert line is not None, proc.stdout
        # The reported figure is the smaller round.
        assert int(line.group(1)) == min(int(line.group(2)), int(line.group(3))) > 0
    # Both orders of every row are judged.
    assert re.search(rf"prb-judge's extra: -?\d+ us per judgment, -?[\d.]+ s over {2 * rows:,} judgments",
                     proc.stdout), proc.stdout


def test_bench_contexts_names_a_missing_folder(tmp_path: Path) -> None:
    proc = run_cli([str(REPO / "benchmarks" / "bench_contexts.py"), str(tmp_path / "nowhere")], cwd=tmp_path,
                   program=[sys.executable])
    assert proc.returncode == 2 and "nowhere: no such folder" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_trace_hf_rows_reports_the_heap_at_the_first_forward_pass(sliver: tuple[Path, int], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from prb_tasks.testing.tiny_rm import build_tiny_rm

    data, rows = sliver
    model = build_tiny_rm(tmp_path / "rm")
    proc = run_cli([str(REPO / "benchmarks" / "trace_hf_rows.py"), str(data), str(model), "--max-length", "64"],
                   cwd=tmp_path, program=[sys.executable])
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r"^rows (\d+): after the documents (-?[\d.]+) MB, at the first forward pass (-?[\d.]+) MB$",
                      proc.stdout, re.M)
    assert found is not None, proc.stdout
    assert int(found.group(1)) == rows  # one scalar document per row

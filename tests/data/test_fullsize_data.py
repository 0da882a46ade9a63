"""The benchmark data generator writes valid rows in the HF layout, the same for the same seed."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from prb_tasks.data.personalized_rb.sources import load_rows
from prb_tasks.data.personalized_rb.subsets import SUBSETS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from fullsize_data import generate


def _digest(root: Path) -> str:
    files = sorted(root.rglob("*.parquet"))
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()


def test_generator_is_deterministic_and_valid(tmp_path):
    stats = generate(tmp_path / "a", seed=3, scale=0.01)
    generate(tmp_path / "b", seed=3, scale=0.01)
    generate(tmp_path / "c", seed=4, scale=0.01)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b") != _digest(tmp_path / "c")
    assert stats["rows"] == {"Art_and_Entertainment": 8, "Lifestyle_and_Personal_Development": 10,
                             "Society_and_Culture": 11}
    for subset in SUBSETS:
        rows = load_rows(subset, str(tmp_path / "a"))  # the real loader and schema
        assert len(rows) == stats["rows"][subset.config]
        for row in rows:
            assert 20 <= len(row.profile) <= 200
            assert 80 <= len(row.chosen.split()) <= 115 and row.chosen != row.rejected
            assert 2 <= len(row.rubric_aspects) <= 4

"""Shared fixtures: copies of the bundled sample in the HF layout, in both formats."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from prb_tasks.data.personalized_rb.subsets import SUBSETS  # noqa: E402
from prb_tasks.common.resources import sample_dir  # noqa: E402

FILE = "test-00000-of-00001"


def sample_rows(config: str) -> list[dict]:
    path = sample_dir() / config / f"{FILE}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_layout(root: Path, rows_by_config: dict[str, list[dict]], fmt: str) -> Path:
    """Write rows as ``root/<config>/test-00000-of-00001.<fmt>`` like the HF repo."""
    for config, rows in rows_by_config.items():
        folder = root / config
        folder.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            (folder / f"{FILE}.jsonl").write_text(
                "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
            )
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), folder / f"{FILE}.parquet")
    return root


@pytest.fixture
def all_sample_rows() -> dict[str, list[dict]]:
    return {s.config: sample_rows(s.config) for s in SUBSETS}


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty prb cache (rankings, selections) on disk and in memory; its folder."""
    from prb_tasks.prompts import rank_cache, selection_cache

    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    rank_cache._CACHES.clear()
    selection_cache._MEMORY.clear()
    yield tmp_path / "cache"
    rank_cache._CACHES.clear()
    selection_cache._MEMORY.clear()

"""Shared fixtures: copies of the bundled sample in the HF layout, in both formats."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from prb_tasks.data.personalized_rb.subsets import SUBSETS  # noqa: E402
from prb_tasks.common.resources import sample_dir  # noqa: E402
from tests import leftovers  # noqa: E402

FILE = "test-00000-of-00001"

# Every process the session starts inherits this token (a fresh one per session, nested
# sessions included), so the check below finds its orphans too (tests/leftovers.py).
_SESSION_PID = os.getpid()
os.environ[leftovers.TOKEN_ENV] = uuid.uuid4().hex


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test left a process running (a server, a ``prb`` run, a ``sleep``);
    name each one, then kill it so it does not outlive the run."""
    left = leftovers.wait_then_kill(_SESSION_PID, os.environ.get(leftovers.TOKEN_ENV))
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
    lines = [f"prb tests: {len(left)} process(es) left running by the tests (now killed); "
             "end what a test starts (tests/conftest.py, docs/development.md):", *(f"  {p}" for p in left)]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


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

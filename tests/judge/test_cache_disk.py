"""The judge cache on a full disk, or damaged: one line, never a ``sqlite3`` traceback.

A full disk is real: SQLite's own ``SQLITE_FULL``, from a page limit on the cache's
connection (in-process) and from a small tmpfs mounted for the test (end to end; needs
root, as on the project's machines and CI)."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from prb_tasks.judge.answer_cache import CachedAnswer, JudgeCache
from prb_tasks.judge.storage import CacheDiskFull, CacheStoreError, store_error
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.e2e.test_judge_e2e import ENV, PERFECT, TASK, N, chosen_policy, eval_args, group_metrics, usage_of
from tests.runner import metric, read_results, run_cli


def answer(n: int) -> CachedAnswer:
    return CachedAnswer(text=f"reply {n} " + "x" * 600, model="openai/fake")


def test_a_full_disk_while_storing_is_one_line_naming_the_folder(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache")
    cache.put("first", answer(0))
    store = cache._store
    assert store is not None
    pages = store._con.execute("PRAGMA page_count").fetchone()[0]
    # SQLite's own "database or disk is full", on this thread's connection.
    store._con.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(CacheDiskFull) as caught:
        for n in range(1, 200):
            cache.put(f"key{n}", answer(n))
    line = str(caught.value)
    assert line == (f"prb-judge: the disk holding the cache {tmp_path / 'cache'} is full (database or disk is full); "
                    "free space there or pass cache_dir= on another disk, then re-run the same command to resume")
    assert cache.get("first") == answer(0)  # what was stored stays readable
    cache.close()


def test_store_errors_say_full_damaged_or_unusable() -> None:
    folder = Path("/data/cache")
    full = store_error(OSError(errno.ENOSPC, "No space left on device"), folder)
    assert isinstance(full, CacheDiskFull) and "is full (No space left on device)" in str(full)
    import sqlite3

    damaged = store_error(sqlite3.DatabaseError("file is not a database"), folder, who="prb cache")
    assert str(damaged).startswith("prb cache: the cache file /data/cache/cache.db is damaged (file is not a database)")
    assert "mv '/data/cache' '/data/cache.damaged'" in str(damaged)
    locked = store_error(PermissionError(errno.EACCES, "Permission denied"), folder)
    assert type(locked) is CacheStoreError and "cannot use the cache in /data/cache (Permission denied)" in str(locked)
    assert store_error(ValueError("x"), folder) is None


def test_a_damaged_cache_stops_prb_eval_with_one_line(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "cache.db").write_bytes(os.urandom(20000))
    with FakeLLMServer(chosen_policy()) as srv:
        proc = run_cli(eval_args(srv, cache, tmp_path / "out"), cwd=tmp_path, env=ENV)
        assert srv.stats()["total_requests"] == 0
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert last.startswith(f"prb-judge: the cache file {cache / 'cache.db'} is damaged (file is not a database)")
    assert f"mv '{cache}' '{cache}.damaged'" in last


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 640 KiB tmpfs: room for the cache's start and a few answers, not for a whole run."""
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=640k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.slow
def test_a_full_disk_mid_run_stops_with_one_line_keeps_answers_and_a_rerun_resumes(
    tmp_path: Path, small_disk: Path
) -> None:
    cache = small_disk / "cache"
    with FakeLLMServer(chosen_policy(), record_requests=False) as srv:
        proc = run_cli(eval_args(srv, cache, tmp_path / "out", "num_concurrent=4"), cwd=tmp_path, env=ENV)
        sent = srv.stats()["total_requests"]
        port = srv.port
    assert proc.returncode == 3, f"the run was expected to fill the disk: {proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr and "sqlite3" not in proc.stderr
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert last.startswith(f"prb eval: the judge stopped early (the disk holding the cache {cache}")
    assert "is full (database or disk is full)" in last and "could not be cached" in last
    usage = usage_of(tmp_path / "out")
    assert usage["stopped_kind"] == "disk_full" and usage["answers_not_stored"] >= 1
    # Answers that could not be stored are still in this run's results, not thrown away.
    answered = usage["judgments"] - usage["errors"] - usage["skipped"]
    assert answered == usage["answers_stored"] + usage["answers_not_stored"] == sent
    assert 0 < metric(read_results(tmp_path / "out"), TASK, "skip_rate") < 1
    subprocess.run(["mount", "-o", "remount,size=16m", str(small_disk)], check=True)
    with FakeLLMServer(chosen_policy(), port=port, record_requests=False) as srv:
        resumed = run_cli(eval_args(srv, cache, tmp_path / "resumed"), cwd=tmp_path, env=ENV)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert srv.stats()["total_requests"] == N - usage["answers_stored"]
    assert group_metrics(tmp_path / "resumed") == PERFECT

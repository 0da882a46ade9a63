"""Issue 63 item 6: every cache and results folder prb writes is readable by its owner only.

The judge's and RM's caches hold what was judged (participants' reasons and demographics when
collected answers are judged); they were created world-readable (0644) under umask 022.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prb_tasks.common.private import owner_only_writes, private_folder
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.runner import run_cli


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The usual default (022), under which new files are world-readable unless prb says otherwise."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def _open_to_others(root: Path) -> list[str]:
    """Every folder and file under ``root`` (itself included) that another account could read."""
    found = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            found.append(f"{path.relative_to(root.parent)} {oct(mode)}")
    return found


def test_the_judges_cache_is_owner_only_folder_files_and_long_values(tmp_path: Path, loose_umask: None) -> None:
    from prb_tasks.judge.answer_cache import CachedAnswer, JudgeCache

    folder = tmp_path / "new" / "judge"
    cache = JudgeCache(folder)
    cache.put("short", CachedAnswer(text="A", model="m"))
    cache.put("long", CachedAnswer(text="reason " * 20_000, model="m"))  # stored in a file of its own
    assert cache.get("long") is not None
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert any(p.suffix == ".val" for p in files) and any(p.name == "cache.db" for p in files)
    assert _open_to_others(tmp_path / "new") == []


def test_the_rm_and_ranking_caches_are_owner_only(tmp_path: Path, loose_umask: None) -> None:
    from prb_tasks.prompts.rank_cache import RankCache
    from prb_tasks.rm.score_cache import ScoreCache

    ScoreCache(tmp_path / "scores").put("k", 0.5)
    RankCache(tmp_path / "ranks").put_many([("k", [1, 0])])
    assert _open_to_others(tmp_path / "scores") == [] and _open_to_others(tmp_path / "ranks") == []


def test_a_cache_an_older_prb_left_readable_is_tightened(tmp_path: Path, loose_umask: None) -> None:
    from prb_tasks.rm.score_cache import ScoreCache

    folder = tmp_path / "old"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    ScoreCache(folder).put("k", 0.5)
    assert _open_to_others(folder) == []
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_parents_that_existed_are_left_alone(tmp_path: Path, loose_umask: None) -> None:
    os.chmod(tmp_path, 0o755)
    made = private_folder(tmp_path / "a" / "b")
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700 and made.is_dir()


def test_owner_only_writes_puts_the_umask_back(loose_umask: None) -> None:
    with owner_only_writes():
        assert os.umask(0o077) == 0o077
    assert os.umask(0o022) == 0o022


def test_a_judged_run_leaves_its_cache_and_results_owner_only(tmp_path: Path) -> None:
    """Through the command line, as a user runs it: results, samples, usage and cache."""
    from tests.e2e.test_judge_e2e import TASK, chosen_policy

    cache, out = tmp_path / "cache", tmp_path / "runs"
    with FakeLLMServer(chosen_policy()) as srv:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                        f"model=openai/fake,api_base={srv.openai_base},cache_dir={cache},num_concurrent=1",
                        "--tasks", TASK, "--limit", "2", "--output_path", str(out), "--log_samples"],
                       cwd=tmp_path, program=["sh", "-c", 'umask 022; exec "$0" -m prb_tasks "$@"',
                                              sys.executable])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert any(p.name.startswith("samples_") for p in out.rglob("*.jsonl"))
    assert any(p.name.startswith("usage_") for p in out.rglob("*.json"))
    assert _open_to_others(cache) == [] and _open_to_others(out) == []

"""``prb cache`` covers both caches under ``$PRB_CACHE_DIR``."""

from __future__ import annotations

from prb_tasks.rm.score_cache import ScoreCache
from tests.runner import run_cli


def test_cache_info_and_clear_scores(tmp_path):
    root = tmp_path / "caches"
    store = ScoreCache(root / "rm-scores")
    for i in range(5):
        store.put(f"key-{i}", float(i))
    env = {"PRB_CACHE_DIR": str(root)}
    info = run_cli(["cache", "info"], cwd=tmp_path, env=env)
    assert info.returncode == 0, info.stderr
    assert f"judge cache: {root / 'judge'}" in info.stdout
    assert "RM score cache" in info.stdout and "entries: 5" in info.stdout
    kept = run_cli(["cache", "clear", "--scores", "--older-than", "1d"], cwd=tmp_path, env=env)
    assert "removed 0 cached scores" in kept.stdout
    cleared = run_cli(["cache", "clear", "--scores"], cwd=tmp_path, env=env)
    assert "removed 5 cached scores" in cleared.stdout
    assert len(ScoreCache(root / "rm-scores")) == 0
    bad = run_cli(["cache", "clear", "--older-than", "soon"], cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "cannot read age 'soon'" in bad.stderr

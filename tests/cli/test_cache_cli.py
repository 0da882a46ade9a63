"""``prb cache`` covers both caches under ``$PRB_CACHE_DIR``."""

from __future__ import annotations

import pytest

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


@pytest.mark.slow
def test_cache_info_and_clear_retrieval(tmp_path):
    root = tmp_path / "caches"
    env = {"PRB_CACHE_DIR": str(root)}
    # A profile variant on the sample fills the retrieval cache with rankings and selections.
    run = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                   "personalized_rb_scalar_profile", "--metadata", '{"data_dir": "sample"}'], cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    info = run_cli(["cache", "info"], cwd=tmp_path, env=env)
    lines = info.stdout.splitlines()
    at = lines.index(f"retrieval cache (post rankings, selected posts): {root / 'retrieval'}")
    stored = int(lines[at + 1].split()[1])
    assert stored > 36  # one ranking per row of the sample, plus each subset's selection
    both = run_cli(["cache", "clear", "--retrieval", "--scores"], cwd=tmp_path, env=env)
    assert both.returncode == 2 and both.stderr.strip() == "prb cache clear: give --scores or --retrieval, not both"
    kept = run_cli(["cache", "clear", "--retrieval", "--older-than", "1d"], cwd=tmp_path, env=env)
    assert f"removed 0 cached rankings and post selections older than 1d from {root / 'retrieval'}" in kept.stdout
    cleared = run_cli(["cache", "clear", "--retrieval"], cwd=tmp_path, env=env)
    assert f"removed {stored} cached rankings and post selections" in cleared.stdout
    after = run_cli(["cache", "info"], cwd=tmp_path, env=env).stdout.splitlines()
    assert after[at + 1].split()[1] == "0"

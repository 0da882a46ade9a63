"""prb_tasks.common.atomic: a folder is replaced as a whole, also when the process is killed
mid-way (a child killed by the $PRB_CRASH_AT hook), and digests find any changed file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from prb_tasks.common import atomic

ROOT = Path(__file__).resolve().parents[2]


def _folder(path: Path, text: str) -> Path:
    (path / "sub").mkdir(parents=True)
    (path / "a.txt").write_text(text, encoding="utf-8")
    (path / "sub" / "b.txt").write_text(text * 2, encoding="utf-8")
    return path


def _read(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text(encoding="utf-8") for p in path.rglob("*") if p.is_file()}


@pytest.mark.parametrize("exchange", [True, False])
def test_publish_replaces_a_folder_as_a_whole(tmp_path, monkeypatch, exchange):
    if not exchange:  # a system without renameat2: two renames
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    target = _folder(tmp_path / "model", "old")
    (target / "stale.txt").write_text("of the old one", encoding="utf-8")
    staged = _folder(atomic.fresh_staging(target), "new")
    atomic.publish(staged, target)
    assert _read(target) == {"a.txt": "new", "sub/b.txt": "newnew"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


_CHILD = """
import sys
from pathlib import Path
from prb_tasks.common import atomic
atomic._exchange = lambda a, b: False
target = Path(sys.argv[1])
staged = atomic.fresh_staging(target)
(staged / "a.txt").write_text("new", encoding="utf-8")
atomic.publish(staged, target, crash="test")
"""


@pytest.mark.parametrize("point", ["test:before-rename", "test:between-renames"])
def test_a_kill_during_publish_leaves_the_old_folder_or_puts_it_back(tmp_path, point):
    target = tmp_path / "model"
    target.mkdir()
    (target / "a.txt").write_text("old", encoding="utf-8")
    child = subprocess.run([sys.executable, "-c", _CHILD, str(target)], cwd=ROOT, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), atomic.CRASH_ENV: point})
    assert child.returncode == -signal.SIGKILL, child.stderr
    if point == "test:between-renames":
        assert not target.exists() and atomic.aside(target).is_dir()
        assert atomic.recover(target) is True
    assert atomic.recover(target) is False
    assert _read(target) == {"a.txt": "old"}


def test_check_digests_names_the_missing_changed_or_foreign_file(tmp_path):
    folder = _folder(tmp_path / "m", "x")
    recorded = atomic.digests(folder, ("sub", "a.txt"))
    assert sorted(recorded) == ["a.txt", "sub/b.txt"]
    assert atomic.check_digests(folder, recorded, ("sub", "a.txt")) is None
    (folder / "sub" / "c.txt").write_text("?", encoding="utf-8")
    assert atomic.check_digests(folder, recorded, ("sub",)) == f"{folder / 'sub' / 'c.txt'} was not written with it"
    (folder / "a.txt").write_text("y", encoding="utf-8")
    assert "a.txt is not the file written with it" in str(atomic.check_digests(folder, recorded, ()))
    (folder / "a.txt").unlink()
    assert atomic.check_digests(folder, recorded, ()) == f"{folder / 'a.txt'} is missing"

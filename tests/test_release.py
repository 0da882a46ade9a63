"""The package is ready to publish: one version everywhere, a changelog entry for it, and a wheel
and sdist that `python -m build` makes from the checkout, the wheel built again from the sdist
alone, each with the metadata an index shows (issue 63 item 10)."""

from __future__ import annotations

import importlib.util
import re
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import prb_tasks
from tests.runner import REPO
from tests.watchdog import run_watched

# Read without tomllib, which Python 3.10 (still supported) lacks: the [project] table's first lines.
PROJECT = (REPO / "pyproject.toml").read_text(encoding="utf-8").split("[project]", 1)[1]
VERSION = re.search(r'^version = "([^"]+)"', PROJECT, re.M).group(1)  # type: ignore[union-attr]
REQUIRES_PYTHON = re.search(r'^requires-python = "([^"]+)"', PROJECT, re.M).group(1)  # type: ignore[union-attr]


def test_one_version_everywhere_with_a_changelog_entry() -> None:
    assert prb_tasks.__version__ == VERSION
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    entries = re.findall(r"^## (\S+)", changelog, re.M)
    assert entries and entries[0] == VERSION, f"CHANGELOG.md's newest entry is {entries[:1]}, pyproject says {VERSION}"


def _metadata(text: str) -> dict[str, list[str]]:
    message = Parser().parsestr(text)
    return {key: message.get_all(key) or [] for key in set(message.keys())}


@pytest.mark.slow
def test_build_makes_a_wheel_and_an_sdist_and_the_sdist_builds_the_same_wheel(tmp_path: Path) -> None:
    if importlib.util.find_spec("build") is None or importlib.util.find_spec("hatchling") is None:
        pytest.skip('build and hatchling come with the dev extra (pip install -e ".[dev]")')
    out = tmp_path / "dist"
    # --no-isolation: offline, with the build backend of this environment (the dev extra's).
    proc = run_watched([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
                       capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (wheel,) = out.glob(f"prb_tasks-{VERSION}-py3-none-any.whl")
    (sdist,) = out.glob(f"prb_tasks-{VERSION}.tar.gz")

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        meta = _metadata(archive.read(f"prb_tasks-{VERSION}.dist-info/METADATA").decode())
        entry_points = archive.read(f"prb_tasks-{VERSION}.dist-info/entry_points.txt").decode()
    assert meta["Name"] == ["prb-tasks"] and meta["Version"] == [VERSION]
    assert meta["Requires-Python"] == [REQUIRES_PYTHON]
    assert meta["License-Expression"] == ["Apache-2.0"] and meta["Summary"]
    assert any(r.startswith("lm-eval[api]") for r in meta["Requires-Dist"])
    assert {"rm", "train", "dev"} <= set(meta["Provides-Extra"])
    assert "prb = prb_tasks.cli:main" in entry_points and "prb-judge = prb_tasks.judge.model:JudgeLM" in entry_points
    assert "prb_lm_eval_hook.pth" in names and "prb_tasks/tasks/personalized_rb/personalized_rb.yaml" in names

    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
        archive.extractall(tmp_path / "unpacked", filter="data")
    for needed in ("pyproject.toml", "README.md", "CHANGELOG.md", "constraints.txt", "hatch_build.py",
                   "prb_tasks/__init__.py", "tests/test_release.py", "docs/index.md"):
        assert needed in members, f"the sdist lacks {needed}"

    # The sdist alone (no git checkout around it) builds the same wheel.
    again = tmp_path / "again"
    proc = run_watched([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(again),
                        str(tmp_path / "unpacked" / f"prb_tasks-{VERSION}")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (rebuilt,) = again.glob("*.whl")
    assert set(zipfile.ZipFile(rebuilt).namelist()) == names

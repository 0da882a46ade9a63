"""Locations of the files that ship with the package.

In a wheel, ``templates/`` and ``configs/`` are copied inside the package; in an
editable checkout they sit next to it at the repository root, so both places are tried.
"""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the prb_tasks folder


def _shipped(name: str) -> Path:
    inside = _PKG / name
    if inside.is_dir():
        return inside
    beside = _PKG.parent / name
    if beside.is_dir():
        return beside
    raise FileNotFoundError(
        f"prb: the bundled '{name}' folder is missing from {_PKG}; reinstall the package"
    )


def tasks_dir() -> Path:
    """Folder of task YAMLs, for ``lm_eval --include_path``."""
    return _PKG / "tasks"


def templates_dir() -> Path:
    """Folder of the bundled Jinja prompt templates."""
    return _shipped("templates")


def configs_dir() -> Path:
    """Folder of the bundled judge configs."""
    return _shipped("configs")


def sample_dir() -> Path:
    """Folder of the bundled synthetic sample, in the HF repo layout."""
    return _PKG / "data" / "personalized_rb" / "sample"


def cache_root() -> Path:
    """Root of prb's caches: ``$PRB_CACHE_DIR`` if set, else the user cache dir ``prb``."""
    env = os.environ.get("PRB_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("prb"))

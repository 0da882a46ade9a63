"""The ``pip install`` line that adds an extra to *this* installation of prb.

prb-tasks is not on the package index, so ``pip install 'prb-tasks[rl]'`` only works where prb
was installed from an index copy; from a checkout (``pip install -e .``, the way the README
installs it) the working line names the checkout: ``pip install -e '/path/to/checkout[rl]'``.
pip records where a package came from in the ``direct_url.json`` of its metadata (PEP 610).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlparse

_DIST = "prb-tasks"
_CHECKOUT = Path(__file__).resolve().parents[2]  # the folder above the prb_tasks package


@lru_cache(maxsize=1)
def _source() -> tuple[str, str | None]:
    """How prb was installed: ("editable" | "folder", its path), ("index", None), or
    ("checkout", path) when prb runs from a checkout without being installed at all."""
    from importlib import metadata

    try:
        dist = metadata.distribution(_DIST)
    except metadata.PackageNotFoundError:
        return "checkout", str(_CHECKOUT)
    try:
        recorded = json.loads(dist.read_text("direct_url.json") or "null")
    except (OSError, ValueError):
        recorded = None
    if not isinstance(recorded, dict) or not str(recorded.get("url", "")).startswith("file://"):
        return "index", None
    folder = unquote(urlparse(str(recorded["url"])).path)
    editable = bool((recorded.get("dir_info") or {}).get("editable"))
    # An editable install of another checkout than the one running (PYTHONPATH set to a second
    # checkout, as in a git worktree): name the one whose code runs.
    if editable and Path(folder).resolve() != _CHECKOUT and (_CHECKOUT / "pyproject.toml").is_file():
        folder = str(_CHECKOUT)
    return ("editable" if editable else "folder"), folder


def pip_install(extra: str) -> str:
    """``pip install ...`` that adds ``extra`` to the prb that is running.

    Args:
        extra: the optional-dependency group (``rm``, ``rl``, ``train``...).
    """
    kind, folder = _source()
    if kind == "index" or folder is None:
        return f"pip install '{_DIST}[{extra}]'"
    target = "." if Path(folder).resolve() == Path.cwd().resolve() else folder
    return f"pip install -e '{target}[{extra}]'" if kind in ("editable", "checkout") \
        else f"pip install '{target}[{extra}]'"

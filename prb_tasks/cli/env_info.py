"""lm-eval's environment report without importing torch for a run that never used it.

After every run lm-eval's ``add_env_info`` writes torch's environment report
(``torch.utils.collect_env``) and transformers' version into the results file, importing
torch and transformers to do so when they are installed. A run of an offline scorer
(``scorer=bm25``), an API judge or a served model never loads either: on the project's
2-core machine the report then cost 3.7 s of a 6.7 s run before its table (import torch
2.2 s, collect_env 0.6 s, import transformers 1.0 s; more at high load). Here, when torch
is not already loaded, the results file gets the versions from the installed packages'
metadata instead (no import), and says why the full report is missing; a run that loaded
torch gets lm-eval's own report unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any


def _installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "N/A"


def light_env_info(original: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """``add_env_info`` that calls ``original`` only when torch is already loaded.

    Args:
        original: lm-eval's ``add_env_info``.
    """

    def add_env_info(storage: dict[str, Any]) -> None:
        if "torch" in sys.modules:
            original(storage)
            return
        import os
        from pathlib import Path

        from lm_eval.loggers.utils import get_commit_from_path  # lm-eval's own, as the original uses

        torch_version = _installed("torch")
        storage.update({
            "pretty_env_info": (f"torch {torch_version} installed, not loaded by this run (prb skips torch's "
                                "environment report, which would import it)" if torch_version != "N/A"
                                else "N/A (torch not installed)"),
            "transformers_version": _installed("transformers"),
            "lm_eval_version": _installed("lm_eval"),
            "upper_git_hash": get_commit_from_path(Path(os.getcwd(), "..")),
        })

    return add_env_info

"""Hatchling build hook: what an editable install copies into site-packages.

hatchling copies the wheel's ``force-include`` files into editable wheels too. For prb
only the start-up hook for plain ``lm_eval`` belongs there (``prb_lm_eval_hook.pth``
and ``_prb_lm_eval_hook.py``, which must sit at the root of site-packages). The
``templates``/``configs`` copies would go stale (an editable install reads them from the
checkout, see ``prb_tasks.common.resources``) and ``pip uninstall`` left their empty
folders behind.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

STARTUP_FILES = {
    "prb_tasks/_startup/prb_lm_eval_hook.pth": "prb_lm_eval_hook.pth",
    "prb_tasks/_startup/_prb_lm_eval_hook.py": "_prb_lm_eval_hook.py",
}


class StartupOnlyWhenEditable(BuildHookInterface):
    """Limits an editable wheel's forced files to the start-up hook."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            build_data["force_include_editable"] = dict(STARTUP_FILES)

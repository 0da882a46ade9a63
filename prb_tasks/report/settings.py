"""Settings: what a model is shown about the user, declared by every task.

Each task YAML declares ``metadata.setting``, one of :data:`SETTINGS`. Reports rank
models against each other only within one setting (and one data source): a judge that
read the user's history and an RM that saw only the prompt answer different questions,
whatever their task names say. lm-eval copies the YAML's metadata into the results
file, so a finished run carries its setting; runs made before tasks declared one are
looked up in the installed YAMLs by task name.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

#: setting id -> what the model sees, for headings.
SETTINGS = {
    "question": "question only",
    "profile": "question + the user's past posts",
    "history": "question + the user's earlier choices",
    "demographics_history": "question + the user's demographics and earlier preferences with reasons",
    "person": "question + what a real person said about themselves and their other choices",
    "plan": "question + the aspects a planner inferred",
    "oracle": "question + the user's gold rubric aspects (diagnostic)",
    "fewshot": "question + k of the user's labelled pairs (few-shot adaptation, k = 0-16)",
}
#: Settings that show the scoring standard itself: an upper bound, never a leaderboard.
DIAGNOSTIC = frozenset({"oracle"})


@lru_cache(maxsize=1)
def declared() -> dict[str, str]:
    """Task name -> the setting its installed YAML declares."""
    from prb_tasks.common.taskindex import task_settings

    return task_settings()


@lru_cache(maxsize=1)
def _families() -> dict[str, str]:
    from prb_tasks.common.taskindex import task_info

    return {name: info.family for name, info in task_info().items()}


def benchmark_of(name: str) -> str | None:
    """The task folder (``personalized_rb``, ``personalllm``...) a task or group lives in, if installed."""
    return _families().get(name)


def setting_of(task: str, config: dict[str, Any] | None = None) -> str | None:
    """The setting of one leaf task of a results file, or None when nothing declares one.

    Args:
        task: the leaf task name.
        config: its entry in the results file's ``configs`` (the run's own declaration wins).
    """
    metadata = (config or {}).get("metadata") or {}
    value = metadata.get("setting") if isinstance(metadata, dict) else None
    if isinstance(value, str) and value:
        return value
    return declared().get(task)


def rank(setting: str) -> tuple[int, str]:
    """Sort key that lays settings out as a ladder climbs them (:data:`SETTINGS`' order: question
    only first, the oracle's rubric last); an undeclared setting follows, alphabetically.

    Args:
        setting: a setting id.
    """
    order = list(SETTINGS)
    return (order.index(setting), "") if setting in order else (len(order), setting)


def describe(setting: str) -> str:
    """The setting in words (an undeclared one is shown as given)."""
    return SETTINGS.get(setting, setting)

"""Hook the plugin into lm-eval: register our models and our task folder.

lm-eval has no plugin discovery, so ``prb eval`` calls :func:`activate` before handing
over to lm-eval's own CLI. Models are registered as lazy ``module:Class`` targets, so
nothing heavy is imported until a model is actually used.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prb_tasks.common.resources import tasks_dir
from prb_tasks.common.taskindex import plugin_task_names

MODELS = {
    "prb-judge": "prb_tasks.judge.model:JudgeLM",
    "prb-rm": "prb_tasks.rm.model:RewardModelLM",
    "prb-method": "prb_tasks.fewshot.model:MethodLM",
}


def register_models() -> None:
    """Add ``prb-judge`` and ``prb-rm`` to lm-eval's model registry."""
    # The registry fills itself with the built-in models only while it is empty, so
    # the built-ins must be loaded before ours or they would all disappear.
    import lm_eval.models  # noqa: F401
    from lm_eval.api.registry import model_registry

    for name, target in MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)


def only_plugin_tasks(requested: Iterable[str]) -> bool:
    """True if every requested task is ours, so lm-eval's own index can be skipped."""
    ours = plugin_task_names()
    root = tasks_dir().resolve()
    items = [t.strip() for spec in requested for t in spec.split(",") if t.strip()]
    if not items:
        return False
    for item in items:
        if item in ours:
            continue
        if item.endswith(".yaml") and root in Path(item).resolve().parents:
            continue
        return False
    return True


#: Set by :func:`activate` for a run that uses only prb's tasks: lm-eval's ~14,700
#: built-in tasks (about 5 s to index) are then left out of every TaskManager.
_skip_builtin = False


def add_task_folder(manager_cls: Any) -> None:
    """Make every ``manager_cls`` (lm-eval's TaskManager) see our task folder.

    The class is changed in place, so every module that imported it already (lm-eval's
    evaluator, its ``ls`` command, user code) sees the change. Our folder is appended to
    ``include_path`` unless it is there already; lm-eval indexes its own tasks first, so
    a name defined in both keeps lm-eval's meaning only if ours does not define it.

    Args:
        manager_cls: the class to change; a second call does nothing.
    """
    import functools
    import inspect

    if manager_cls.__dict__.get("_prb_patched"):
        return
    original = manager_cls.__init__
    signature = inspect.signature(original)
    ours = str(tasks_dir())

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):  # noqa: N807 - replaces the class's own
        bound = signature.bind(self, *args, **kwargs)
        given = bound.arguments.get("include_path")
        paths = [] if given is None else ([given] if isinstance(given, (str, Path)) else list(given))
        if ours not in map(str, paths):
            paths.append(ours)
        bound.arguments["include_path"] = paths
        if _skip_builtin:
            bound.arguments["include_defaults"] = False
        original(*bound.args, **bound.kwargs)

    manager_cls.__init__ = __init__
    manager_cls._prb_patched = True


def include_task_folder(skip_builtin: bool) -> None:
    """Make every TaskManager that lm-eval creates see our tasks.

    Args:
        skip_builtin: also stop it from indexing lm-eval's ~14,700 built-in tasks
            (about 5 s), for runs that only use ours.
    """
    global _skip_builtin
    import lm_eval.tasks as harness_tasks

    _skip_builtin = skip_builtin
    add_task_folder(harness_tasks.TaskManager)


class _HideCustomKwargsHint(logging.Filter):
    """Drops lm-eval's per-task hint about ``--metadata`` for custom loaders.

    lm-eval prints it for every task with a ``custom_dataset``, with an example that
    belongs to another task; our options are in docs/tasks.md (Options) instead.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "Custom kwargs can be passed to `--metadata`" not in record.getMessage()


class _HideDeclaredPartialAggregates(logging.Filter):
    """Drops lm-eval's warning that a metric of a group is missing in some of its subtasks, for prb's own
    groups: they aggregate such a metric over the subtasks that report it on purpose (RewardBench 2's
    ``top1`` over its five best-of-N subsets; Ties has none), as their YAMLs and the legend say."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "is missing in" not in message or not message.startswith("Group '"):
            return True
        from prb_tasks.common.taskindex import plugin_task_names

        return message.split("'", 2)[1] not in plugin_task_names()


def activate(requested_tasks: Iterable[str] = ()) -> None:
    """Register models and tasks for an lm-eval run in this process."""
    from prb_tasks.common.lazy_seed import install
    from prb_tasks.common.redact import install_log_redaction

    install_log_redaction()  # lm-eval logs model_args verbatim: api_base=...?key=... included
    register_models()
    install()
    include_task_folder(skip_builtin=only_plugin_tasks(requested_tasks))
    logging.getLogger("lm_eval.api.task").addFilter(_HideCustomKwargsHint())
    logging.getLogger("lm_eval.api.group").addFilter(_HideDeclaredPartialAggregates())

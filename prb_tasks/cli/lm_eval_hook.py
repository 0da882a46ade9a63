"""What prb adds to plain ``lm_eval`` once lm-eval's own modules are imported.

The start-up hook (``_prb_lm_eval_hook``, run by the ``prb_lm_eval_hook.pth`` file that
the wheel installs) calls :func:`on_import` right after each of these lm-eval modules
has been executed, and never imports anything before:

- ``lm_eval.tasks``: prb's task folder joins every TaskManager's paths, so
  ``lm_eval ls tasks`` and ``--tasks personalized_rb`` see prb's tasks;
- ``lm_eval.models``: lm-eval has just registered its built-in models (the registry
  loads them only while it is empty, so registering first would hide them all); prb's
  models are added from prb's own ``lm_eval.models`` entry points;
- ``lm_eval._cli.run``: ``lm_eval run`` with a prb model, or with only prb's tasks, goes
  through ``prb eval``'s checks (did-you-mean for task and model names, keys refused in
  ``--model_args``, ``--metadata`` keys, the output folder) and prints its compact table.

Each part retires by itself when lm-eval reads the entry points of its group itself
(:func:`harness_reads_entry_points`): upstream has merged model entry points on its
development branch and has a proposal open for task entry points.
"""

from __future__ import annotations

import re
import sys
from types import ModuleType
from typing import Any

from prb_tasks.cli.running import inside_prb_eval, prb_eval_running  # noqa: F401 - prb_eval_running: its name

#: The distribution whose entry points name prb's models.
DISTRIBUTION = "prb-tasks"
MODEL_GROUP = "lm_eval.models"
TASK_GROUP = "lm_eval.tasks"

# Modules of lm-eval that would read each group if lm-eval read plug-in entry points.
_READERS = {
    MODEL_GROUP: ("lm_eval.api.registry", "lm_eval.models"),
    TASK_GROUP: ("lm_eval.tasks", "lm_eval.tasks.manager", "lm_eval.tasks._index", "lm_eval.api.registry"),
}

def on_import(name: str, module: ModuleType) -> None:
    """Act on one of lm-eval's modules that has just been executed.

    Args:
        name: the module's name (``lm_eval.tasks``, ``lm_eval.models`` or ``lm_eval._cli.run``).
        module: the module itself.
    """
    if name == "lm_eval.tasks":
        if not harness_reads_entry_points(TASK_GROUP):
            from prb_tasks.plugin import add_task_folder

            add_task_folder(module.TaskManager)
    elif name == "lm_eval.models":
        if not harness_reads_entry_points(MODEL_GROUP):
            register_entry_point_models()
    elif name == "lm_eval._cli.run":
        wrap_run_command(module)
        guard_dict_options(getattr(module, "MergeDictAction", None))


def harness_reads_entry_points(group: str) -> bool:
    """Whether the installed lm-eval loads the entry points of ``group`` by itself.

    Feature detection, not a version check: one of lm-eval's modules that would load
    them (already imported at this point) names the group in quotes and reads entry
    points (``entry_points(`` or upstream's ``load_plugins(``).

    Args:
        group: ``lm_eval.models`` or ``lm_eval.tasks``.
    """
    quoted = re.compile(r"""["']""" + re.escape(group) + r"""["']""")
    for name in _READERS[group]:
        module = sys.modules.get(name)
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
        if not origin or not origin.endswith(".py"):
            continue
        try:
            with open(origin, encoding="utf-8") as handle:
                source = handle.read()
        except OSError:
            continue
        if quoted.search(source) and ("entry_points(" in source or "load_plugins(" in source):
            return True
    return False


def entry_point_models() -> dict[str, str]:
    """prb's models as its ``lm_eval.models`` entry points name them (``name -> module:Class``).

    Falls back to :data:`prb_tasks.plugin.MODELS` when prb runs from a checkout that
    was never installed (no metadata to read).
    """
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        points = distribution(DISTRIBUTION).entry_points
    except PackageNotFoundError:
        from prb_tasks.plugin import MODELS

        return dict(MODELS)
    return {point.name: point.value for point in points if point.group == MODEL_GROUP}


def register_entry_point_models() -> None:
    """Add prb's models to lm-eval's registry, after its built-ins, as lazy targets."""
    from lm_eval.api.registry import model_registry

    for name, target in entry_point_models().items():
        if name not in model_registry:
            model_registry.register(name, target=target)


def _cli_argv() -> list[str] | None:
    """The arguments of ``lm_eval run`` as typed, or None when not run from lm-eval's CLI.

    lm-eval's CLI inserts ``run`` itself when the command is left out.
    """
    argv = sys.argv[1:]
    if not argv or argv[0] != "run":
        return None
    return argv[1:]


def wants_prb(argv: list[str]) -> bool:
    """Whether an ``lm_eval run`` command line is prb's to check and print.

    True for a prb model (``prb-judge``, ``prb-rm``, ``prb-method``), or tasks that are
    all prb's or look like a misspelt prb task. A mixed run (prb's task beside lm-eval's)
    stays lm-eval's own.

    Args:
        argv: the command line, ``run`` left out.
    """
    from prb_tasks.cli.evalcmd import _looks_like_ours
    from prb_tasks.common.harness_args import HarnessArgsError, parse
    from prb_tasks.plugin import only_plugin_tasks

    try:
        args = parse(argv)
    except HarnessArgsError:
        return False  # lm-eval says what is wrong, as it always did
    if args.model in entry_point_models():
        return True
    tasks = args.tasks
    if not tasks or args.settings.get("include_path"):
        return False
    return only_plugin_tasks(tasks) or any(_looks_like_ours(t) for t in tasks)


def wrap_run_command(module: ModuleType) -> None:
    """Route ``lm_eval run`` through ``prb eval``'s checks and table when it is prb's run.

    Args:
        module: ``lm_eval._cli.run``; its ``Run._execute`` is replaced before the CLI
            binds it, and calls the original for every other run.
    """
    run_cls = getattr(module, "Run", None)
    original = getattr(run_cls, "__dict__", {}).get("_execute")
    if not isinstance(original, staticmethod) or getattr(original.__func__, "_prb_wrapped", False):
        return
    execute = original.__func__

    def _execute(args: Any) -> None:
        argv = _cli_argv()
        if inside_prb_eval() or argv is None or not wants_prb(argv):
            execute(args)
            return
        from prb_tasks.cli.evalcmd import run_eval

        status = run_eval(argv, plain=True)
        if status:
            raise SystemExit(status)

    _execute._prb_wrapped = True  # type: ignore[attr-defined]
    _execute.__doc__ = execute.__doc__
    assert run_cls is not None  # it has an _execute (checked above)
    run_cls._execute = staticmethod(_execute)


def _option(argv: list[str], name: str) -> str | None:
    """The value of ``name`` (``--model X`` or ``--model=X``) on a command line, without parsing it."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    return None


def named_ours(argv: list[str]) -> bool:
    """Whether a command line that does not parse names a prb model, or only prb's tasks.

    Args:
        argv: the command line, ``run`` left out.
    """
    from prb_tasks.plugin import only_plugin_tasks

    if _option(argv, "--model") in entry_point_models():
        return True
    tasks = [t.strip() for t in (_option(argv, "--tasks") or "").split(",") if t.strip()]
    return bool(tasks) and only_plugin_tasks(tasks)


def guard_dict_options(action_cls: Any) -> None:
    """Answer bad JSON in a dict option (``--metadata '{"k": 1'``) of prb's run in one line.

    lm-eval's parser lets ``try_parse_json``'s ValueError escape as a 42-line traceback,
    before ``Run._execute`` (and so :func:`wrap_run_command`) is reached. prb's own parser
    (``prb eval``, a subclass of the action) has its own answer and is left alone.

    Args:
        action_cls: ``lm_eval._cli.utils.MergeDictAction`` (its ``__call__`` is replaced).
    """
    original = getattr(action_cls, "__call__", None)
    if action_cls is None or original is None or getattr(original, "_prb_wrapped", False):
        return

    def checked(self: Any, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        try:
            original(self, parser, namespace, values, option_string)
        except ValueError as exc:
            argv = _cli_argv()
            if type(self) is not action_cls or inside_prb_eval() or argv is None or not named_ours(argv):
                raise
            from prb_tasks.common.harness_args import json_problem

            print(f"prb: argument {option_string or self.dest}: {json_problem(values, exc)}", file=sys.stderr)
            raise SystemExit(2) from None

    checked._prb_wrapped = True  # type: ignore[attr-defined]
    action_cls.__call__ = checked

"""``prb eval --tasks personalized_rb_planner``: both planner stages in one command.

The planner is two ordinary lm-eval runs, and this module just runs them one after
the other in the same process, so each keeps lm-eval's semantics (its own results
file, samples, ``--limit``):

1. ``personalized_rb_plan`` with the planner model: ``prb-judge`` with the judge's
   ``--model_args``, where every ``planner_<key>=value`` sets ``<key>`` for the planner
   (``planner_model=...`` picks another model; then the judge's model, config,
   ``api_base``, key variable and prices are not inherited). Its samples go to
   ``<output_path>/plan`` (a temporary folder without ``--output_path``).
2. the requested tasks with ``personalized_rb_planner`` replaced by
   ``personalized_rb_planned``, reading the plans stage 1 just wrote
   (``--metadata plans=...``; with ``--limit``, also ``plans_missing=skip``).

Both stages go through prb-judge's answer cache, so re-running the command sends
nothing new. Other backends use the two-command form (see docs/tasks.md, The planner).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.common.terminal import fit, shown_path
from prb_tasks.data.plan_files import PLAN_TASK

PLANNER_TASK = "personalized_rb_planner"
PLANNED_TASK = "personalized_rb_planned"
# Options whose values this module rewrites (with how many values each takes).
_TASKS = ("--tasks", "-t")
_MODEL_ARGS = ("--model_args", "-a")
_METADATA = ("--metadata",)
_OUTPUT = ("--output_path", "-o")
_MULTI = set(_TASKS + _MODEL_ARGS + _METADATA)
# Settings that name *which* model answers; a planner with its own model or config
# does not inherit the judge's.
_MODEL_IDENTITY = ("model", "config", "api_base", "api_key_env", "transport",
                   "input_cost_per_mtok", "output_cost_per_mtok", "cached_input_cost_per_mtok")
# Verdict-only settings: a plan has no verdict, so re-asking for one would be wrong.
_JUDGE_ONLY = ("reask", "reask_prompt")
# Per-variant template files are ambiguous when two variants run.
_SINGLE_TEMPLATE_KEYS = ("user_template", "system_template")


class PlannerUsageError(PRBError):
    """The one-command planner was asked for something it cannot do."""


def _values(argv: list[str], names: tuple[str, ...]) -> list[list[str]]:
    """Every occurrence of an option, with the values it took."""
    found: list[list[str]] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if "=" in arg and arg.split("=", 1)[0] in names:
            found.append([arg.split("=", 1)[1]])
        elif arg in names:
            taken: list[str] = []
            j = i + 1
            while j < len(argv) and not argv[j].startswith("-") and (arg in _MULTI or not taken):
                taken.append(argv[j])
                j += 1
            found.append(taken)
            i = j
            continue
        i += 1
    return found


def _without(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """``argv`` with every occurrence of the options ``names`` (and their values) removed."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if "=" in arg and arg.split("=", 1)[0] in names:
            i += 1
            continue
        if arg in names:
            j = i + 1
            while j < len(argv) and not argv[j].startswith("-") and (arg in _MULTI or j == i + 1):
                j += 1
            i = j
            continue
        out.append(arg)
        i += 1
    return out


def task_names(argv: list[str]) -> list[str]:
    """Task names given with ``--tasks`` (space- or comma-separated, like lm-eval)."""
    return [t.strip() for values in _values(argv, _TASKS) for v in values for t in v.split(",") if t.strip()]


def wants_planner(argv: list[str]) -> bool:
    """True when the one-command planner task was requested."""
    return PLANNER_TASK in task_names(argv)


def _as_dict(argv: list[str], names: tuple[str, ...], flag: str) -> dict[str, Any]:
    """An option's values merged into one dict, read the way lm-eval reads them."""
    from lm_eval._cli.utils import key_val_to_dict, try_parse_json

    merged: dict[str, Any] = {}
    for values in _values(argv, names):
        if not values:
            continue
        try:
            first = try_parse_json(values[0])
            if isinstance(first, dict):
                merged.update(first)
                continue
            for value in values:
                merged.update(key_val_to_dict(value))
        except ValueError as exc:
            raise PlannerUsageError(f"prb: {flag}: {exc}") from None
    return merged


def split_model_args(model_args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The judge's and the planner's model_args from one ``--model_args``.

    Args:
        model_args: everything given, including ``planner_<key>`` entries.
    """
    judge = {k: v for k, v in model_args.items() if not k.startswith("planner_")}
    own = {k.removeprefix("planner_"): v for k, v in model_args.items() if k.startswith("planner_")}
    inherit = {k: v for k, v in judge.items() if k not in _JUDGE_ONLY}
    if "model" in own or "config" in own:
        inherit = {k: v for k, v in inherit.items() if k not in _MODEL_IDENTITY}
    return judge, {**inherit, **own}


def _last(argv: list[str], names: tuple[str, ...]) -> str | None:
    values = [v for found in _values(argv, names) for v in found[:1]]
    return values[-1] if values else None


@contextmanager
def _plan_folder(output_path: str | None) -> Iterator[Path]:
    if output_path:
        root = Path(output_path)
        yield (root.parent if root.suffix == ".json" else root) / "plan"
        return
    with tempfile.TemporaryDirectory(prefix="prb-plans-") as tmp:
        print(fit("prb: planner: no --output_path, so stage 1's plans go to a temporary folder that is "
                  "deleted at the end (pass --output_path to keep them)"), flush=True)
        yield Path(tmp)


def _fresh_plans(folder: Path, started: float) -> Path:
    files = [p for p in folder.rglob(f"samples_{PLAN_TASK}_*.jsonl") if p.stat().st_mtime >= started - 1]
    parents = sorted({p.parent for p in files})
    if len(parents) != 1:
        raise PlannerUsageError(
            f"prb: planner: stage 1 wrote no plans under '{folder}' (found {len(files)} files); "
            "see the messages above"
        )
    return parents[0]


def run_planner(argv: list[str], run_eval: Callable[[list[str]], int]) -> int:
    """Run stage 1, then stage 2 with the fresh plans; both through ``run_eval``.

    Args:
        argv: ``prb eval`` arguments naming ``personalized_rb_planner`` among the tasks.
        run_eval: runs one lm-eval invocation and returns its exit code.
    """
    try:
        return _run(argv, run_eval)
    except PlannerUsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("prb: planner interrupted; answers and rankings received so far are cached, so the same "
              "command continues where it stopped", file=sys.stderr)
        return 130


def _run(argv: list[str], run_eval: Callable[[list[str]], int]) -> int:
    model = _last(argv, ("--model", "-M"))
    if model != "prb-judge":
        raise PlannerUsageError(
            f"prb: {PLANNER_TASK} (both stages in one command) needs --model prb-judge, got {model or 'none'}; "
            f"with other backends run --tasks {PLAN_TASK} --log_samples --output_path DIR, then "
            f"--tasks {PLANNED_TASK} --metadata '{{\"plans\": \"DIR\"}}'"
        )
    model_args = _as_dict(argv, _MODEL_ARGS, "--model_args")
    metadata = _as_dict(argv, _METADATA, "--metadata")
    if "plans" in metadata:
        raise PlannerUsageError(
            f"prb: {PLANNER_TASK} makes its own plans; to judge with existing ones run "
            f"--tasks {PLANNED_TASK} --metadata '{{\"plans\": ...}}' instead"
        )
    clash = [k for k in _SINGLE_TEMPLATE_KEYS if k in metadata]
    if clash:
        raise PlannerUsageError(
            f"prb: {PLANNER_TASK} runs two prompts, so '{clash[0]}' is ambiguous; put your files in a "
            "folder with our names (planner/user.jinja, judge/user_planned.jinja, ...) and pass "
            "--metadata templates=FOLDER"
        )
    judge_args, planner_args = split_model_args(model_args)
    if not planner_args.get("model") and not planner_args.get("config"):
        raise PlannerUsageError("prb: --model_args needs model=... (or config=...) for the judge; "
                                "planner_model=... picks a different planner")
    tasks = task_names(argv)
    stage2_tasks = list(dict.fromkeys(PLANNED_TASK if t == PLANNER_TASK else t for t in tasks))
    output = _last(argv, _OUTPUT)
    limited = bool(_values(argv, ("--limit", "-L")))
    base = _without(argv, _TASKS + _MODEL_ARGS + _METADATA + _OUTPUT)

    from prb_tasks.plugin import activate

    # Decide once, for both runs, whether lm-eval's own task index is needed.
    activate([PLAN_TASK, *stage2_tasks])
    with _plan_folder(output) as plan_dir:
        stage1 = [*base, "--tasks", PLAN_TASK, "--model_args", json.dumps(planner_args),
                  "--output_path", str(plan_dir), "--log_samples"]
        if metadata:
            stage1 += ["--metadata", json.dumps(metadata)]
        print(fit(f"prb: planner stage 1/2: {planner_args.get('model') or planner_args.get('config')} "
                  f"infers each user's expectations ({PLAN_TASK}) -> {shown_path(plan_dir)}"), flush=True)
        started = time.time()
        code = run_eval(stage1)
        if code:
            return code
        plans = _fresh_plans(plan_dir, started)
        meta2 = {**metadata, "plans": str(plans)}
        if limited:
            # Stage 1 planned only the first rows; judge those.
            meta2["plans_missing"] = "skip"
        stage2 = [*base, "--tasks", ",".join(stage2_tasks), "--model_args", json.dumps(judge_args),
                  "--metadata", json.dumps(meta2)]
        if output:
            stage2 += ["--output_path", output]
        print(fit(f"prb: planner stage 2/2: {judge_args.get('model') or judge_args.get('config')} judges with "
                  f"the inferred aspects ({', '.join(stage2_tasks)})"), flush=True)
        return run_eval(stage2)

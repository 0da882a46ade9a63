"""What ``prb tasks`` lists: every task group our YAML folder defines, read from the YAMLs.

Nothing is hard-coded: a family added under ``prb_tasks/tasks/<family>/`` appears
here by itself. The description is the group's ``group_alias``; the backends follow
from the subtasks' ``output_type``; the data from their ``dataset_kwargs``.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from prb_tasks.common.resources import tasks_dir
from prb_tasks.common.terminal import WIDTH, fit

_NAME_LINE = re.compile(r"^(?:task|group):\s*([A-Za-z0-9_\-]+)\s*$", re.MULTILINE)
_BACKENDS = {
    "generate_until": "prb-judge, lm-eval chat backends",
    "multiple_choice": "prb-rm (hf/vllm: log-likelihood reference)",
}


@lru_cache(maxsize=1)
def plugin_task_names() -> frozenset[str]:
    """Every task and group name our YAML folder defines (read without importing code)."""
    names: set[str] = set()
    for path in tasks_dir().rglob("*.yaml"):
        names.update(_NAME_LINE.findall(path.read_text(encoding="utf-8")))
    return frozenset(names)


@dataclass(frozen=True)
class GroupEntry:
    """One task group.

    Attributes:
        name: the group name to pass to ``--tasks``.
        description: its ``group_alias`` (or name).
        subtasks: the subtask names.
        backends: which models run it.
        data: ``bundled sample`` or ``hub / data_dir``.
        family: the folder it lives in.
    """

    name: str
    description: str
    subtasks: tuple[str, ...]
    backends: str
    data: str
    family: str


@lru_cache(maxsize=1)
def _loader() -> Any:
    import yaml

    # libyaml's safe loader where PyYAML has it (its wheels do): the same data, read in C (every run of
    # `prb eval` reads the ~280 task YAMLs; in Python that was about 0.3 s of its start-up).
    class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    # ``!function module.name`` tags only matter to lm-eval; read them as text.
    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return _Loader


def _load(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_loader())  # a safe loader's subclass
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _resolved(path: Path, cache: dict[Path, dict[str, Any]]) -> dict[str, Any]:
    if path not in cache:
        data = _load(path)
        base = data.get("include")
        if isinstance(base, str):
            data = {**_resolved(path.parent / base, cache), **data}
        cache[path] = data
    return cache[path]


@dataclass(frozen=True)
class TaskInfo:
    """What the YAMLs say about one task or group name.

    Attributes:
        family: the folder the YAML lives in (``personalized_rb``).
        source: the data source the YAML fixes (``sample``), or None; for a group,
            its members' common one.
    """

    family: str
    source: str | None


def _scan() -> tuple[dict[str, tuple[Path, dict[str, Any]]], list[tuple[Path, dict[str, Any]]]]:
    cache: dict[Path, dict[str, Any]] = {}
    tasks: dict[str, tuple[Path, dict[str, Any]]] = {}
    found: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted(tasks_dir().rglob("*.yaml")):
        data = _resolved(path, cache)
        if isinstance(data.get("task"), str):
            tasks[data["task"]] = (path, data)
        if isinstance(data.get("group"), str):
            found.append((path, data))
    return tasks, found


def _source(data: dict[str, Any]) -> str | None:
    value = (data.get("dataset_kwargs") or {}).get("source")
    return str(value) if value else None


def task_info() -> dict[str, TaskInfo]:
    """Every task and group name under the task folder, with its family and fixed source."""
    tasks, found = _scan()
    info = {name: TaskInfo(path.parent.name, _source(data)) for name, (path, data) in tasks.items()}
    for path, data in found:
        members = [str(t) for t in data.get("task") or [] if isinstance(t, str)]
        sources = {info[m].source if m in info else None for m in members}
        info[data["group"]] = TaskInfo(path.parent.name, sources.pop() if len(sources) == 1 else None)
    return info


def task_kinds() -> dict[str, tuple[str, str]]:
    """Task name -> (its ``output_type``, the backend its YAML names in ``metadata.backends``, or "")."""
    tasks, _ = _scan()
    return {name: (str(data.get("output_type") or ""), str((data.get("metadata") or {}).get("backends") or ""))
            for name, (_path, data) in tasks.items()}


def task_settings() -> dict[str, str]:
    """Task name -> the ``metadata.setting`` its YAML declares (see :mod:`prb_tasks.report.settings`)."""
    tasks, _ = _scan()
    out = {}
    for name, (_path, data) in tasks.items():
        setting = (data.get("metadata") or {}).get("setting")
        if isinstance(setting, str) and setting:
            out[name] = setting
    return out


def _entry(name: str, description: str, members: tuple[str, ...], tasks: dict[str, dict[str, Any]],
           family: str) -> GroupEntry:
    kinds = sorted({str(tasks.get(m, {}).get("output_type", "")) for m in members} - {""})
    sources = {str((tasks.get(m, {}).get("dataset_kwargs") or {}).get("source") or "") for m in members}
    data = {"sample": "bundled sample", "example": "bundled example"}.get(sources.pop(), "hub / data_dir") \
        if len(sources) == 1 else "hub / data_dir"
    # A task may name its backend itself (the few-shot tasks: prb-method), else the output type says.
    declared = {str((tasks.get(m, {}).get("metadata") or {}).get("backends") or "") for m in members} - {""}
    backends = "; ".join(sorted(declared)) if declared else "; ".join(_BACKENDS.get(k, k) for k in kinds) or "-"
    return GroupEntry(name=name, description=description, subtasks=members,
                      backends=backends, data=data, family=family)


def groups() -> list[GroupEntry]:
    """Every group, and every task that belongs to no group, sorted by family then name."""
    scanned, found = _scan()
    tasks = {name: data for name, (_path, data) in scanned.items()}
    entries = []
    members_of_groups: set[str] = set()
    for path, data in found:
        members = tuple(str(t) for t in data.get("task") or [] if isinstance(t, str))
        members_of_groups.update(members)
        entries.append(_entry(data["group"], str(data.get("group_alias") or data["group"]), members, tasks,
                              path.parent.name))
    for name, (path, data) in scanned.items():
        if name not in members_of_groups:
            entries.append(_entry(name, str(data.get("task_alias") or name), (name,), tasks, path.parent.name))
    return sorted(entries, key=lambda e: (e.family, e.name))


def _model_of(backends: str) -> str:
    """The short name of the prb model that runs a task: the first word of its backends text."""
    return re.split(r"[ ,;]", backends, maxsplit=1)[0] or "-"


def table() -> str:
    """The text ``prb tasks`` prints: one row per task (name, the prb model that runs it, its
    description wrapped by words to fit 120 columns), the backends each model stands for, hints."""
    entries = groups()
    width = max((len(e.name) for e in entries), default=10)
    models = {_model_of(e.backends): e.backends for e in entries}
    model_width = max(len("model"), *(len(m) for m in models))
    lines = [f"{'task':<{width}}  {'model':<{model_width}}  description"]
    for entry in entries:
        lines.append(f"{entry.name:<{width}}  {_model_of(entry.backends):<{model_width}}  {entry.description}")
    # Continuation lines of a description start under the description column.
    hang = " " * (width + model_width + 4)
    rows = [part for line in lines for part in textwrap.wrap(line, WIDTH, subsequent_indent=hang,
                                                             break_long_words=False, break_on_hyphens=False)]
    rows.append("")
    rows.append("Backends: " + "; ".join(f"{model} = {full}" for model, full in sorted(models.items())
                                         if full != model) + ".")
    grouped = next((e for e in entries if len(e.subtasks) > 1), None)
    if grouped is not None:
        rows.append("Each group runs its subsets as subtasks, also usable alone, e.g. "
                    + ", ".join(grouped.subtasks) + ".")
    rows.append("personalized_rb_planner (prb-judge only) runs personalized_rb_plan and then personalized_rb_planned "
                "in one command; see docs/tasks.md (the planner).")
    rows.append("Run one: prb eval --model prb-judge|prb-rm|prb-method --model_args ... --tasks NAME")
    rows.append("     or: lm_eval --include_path \"$(prb tasks-dir)\" ... (lm-eval's own models)")
    rows.append("Tasks that are not '_sample' read the HF hub, or a local copy given with "
                "--metadata '{\"data_dir\": \"DIR\"}' or PRB_DATA_DIR; `prb eval --help` lists the --metadata keys.")
    return fit("\n".join(rows))

"""Find lm-eval result and sample files of prb tasks under some folders."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prb_tasks.errors import PRBError
from prb_tasks.textfiles import utf8_lines

_SECRET_HINTS = ("key", "token", "secret", "password")
_LABEL_KEYS = ("config", "model", "pretrained", "scorer", "endpoint")


@dataclass
class Run:
    """One ``results_*.json`` of lm-eval, with the sample logs written beside it.

    Attributes:
        path: the results file.
        label: a short, secret-free name of the model that produced it.
        results: lm-eval's ``results`` section (task or group -> metrics).
        groups: our group names in the file, each with its subtask names.
        samples: subtask -> logged samples (empty without ``--log_samples``).
    """

    path: Path
    label: str
    results: dict[str, dict[str, Any]]
    groups: dict[str, list[str]]
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def model_label(config: dict[str, Any]) -> str:
    """``model (k=v, ...)`` from a results file's ``config``, without secrets."""
    args = config.get("model_args") or {}
    if isinstance(args, str):
        args = dict(p.split("=", 1) for p in args.split(",") if "=" in p)
    shown = [
        f"{k}={args[k]}" for k in _LABEL_KEYS
        if k in args and not any(h in k.lower() for h in _SECRET_HINTS)
    ]
    return f"{config.get('model', '?')} ({', '.join(shown)})" if shown else str(config.get("model", "?"))


def _samples_for(results_path: Path, task: str) -> list[dict[str, Any]]:
    stamp = results_path.stem.removeprefix("results_")
    path = results_path.parent / f"samples_{task}_{stamp}.jsonl"
    if not path.is_file():
        return []
    rows = []
    with path.open("rb") as handle:
        for number, line in enumerate(utf8_lines(handle, path, "samples file"), start=1):
            if not line.strip():
                continue
            fix = "re-run the evaluation with --log_samples or move the file away"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise PRBError(f"prb compare: {path} line {number} is not valid JSON ({exc}); {fix}") from None
            if not isinstance(row, dict):
                raise PRBError(f"prb compare: {path} line {number} is not a JSON object; {fix}")
            rows.append(row)
    return rows


def load_runs(paths: list[Path]) -> list[Run]:
    """Every results file with at least one prb group, oldest first."""
    files: list[Path] = []
    for root in paths:
        if root.is_file():
            files.append(root)
        elif root.is_dir():
            files.extend(root.rglob("results_*.json"))
        else:
            raise PRBError(f"prb compare: '{root}' does not exist")
    runs: list[Run] = []
    for path in sorted(set(files), key=lambda p: p.stat().st_mtime):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise PRBError(f"prb compare: cannot read {path}: {exc}") from None
        if not isinstance(data, dict):
            raise PRBError(f"prb compare: {path} is not an lm-eval results file (not a JSON object)")
        groups = {
            name: list(subtasks)
            for name, subtasks in (data.get("group_subtasks") or {}).items()
            if name.startswith("personalized_rb") and subtasks
        }
        if not groups:
            continue
        run = Run(path, model_label(data.get("config") or {}), data.get("results") or {}, groups)
        for subtasks in groups.values():
            for task in subtasks:
                run.samples[task] = _samples_for(path, task)
        runs.append(run)
    return runs

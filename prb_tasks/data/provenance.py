"""Which data each task of a run actually read: the bundled sample, a local folder or the hub.

Loaders call :func:`record` once per task, which also logs the source; ``prb eval``
then writes what was recorded into the results file (the ``prb.data_sources``
section, see :func:`results_section`) and prints it under the table, so a run on the
bundled sample or on a local copy can never pass for a run on the published benchmark.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Kind = Literal["sample", "local", "file", "hub"]

_LABELS = {"sample": "bundled SYNTHETIC sample", "local": "local folder", "file": "local file", "hub": "HF hub"}

_RECORDED: dict[str, DataSource] = {}


@dataclass(frozen=True)
class DataSource:
    """Where one task's rows came from.

    Attributes:
        kind: ``sample`` (data bundled with prb and written for it), ``local`` (a folder
            given with ``data_dir`` / ``PRB_DATA_DIR``), ``file`` (a user's own preference
            file) or ``hub`` (the HF dataset).
        location: the folder or file, or the HF dataset id.
        subset: the subset (HF config or split) read.
        rows: rows read (before ``--limit``).
    """

    kind: Kind
    location: str
    subset: str
    rows: int

    def label(self) -> str:
        """``bundled SYNTHETIC sample``, ``local folder /x`` or ``HF hub org/name``."""
        return _label(self.kind, self.location)


def _label(kind: str, location: str) -> str:
    return _LABELS["sample"] if kind == "sample" else f"{_LABELS[kind]} {location}"


def record(loader_kwargs: dict[str, Any], source: DataSource, task: str) -> None:
    """Remember the source of the task whose loader received ``loader_kwargs``, and log it.

    Args:
        loader_kwargs: the keywords lm-eval passed to the loader; ``config_source``
            (the task's YAML file, added by lm-eval) identifies the task.
        source: what was read.
        task: the task's name for the log line (plain ``lm_eval`` runs show it too).
    """
    import logging

    key = str(loader_kwargs.get("config_source") or f"{source.kind}:{source.location}:{source.subset}")
    _RECORDED[key] = source
    # A child of lm-eval's logger, so it is printed wherever lm-eval's own lines are.
    logging.getLogger("lm_eval.prb_tasks").info("%s: %d rows from the %s", task, source.rows, source.label())


def for_results(results: dict[str, Any]) -> dict[str, DataSource]:
    """Task name -> data source, for the tasks of an lm-eval results dict.

    Args:
        results: what ``lm_eval.simple_evaluate`` returned (``configs`` is read).
    """
    found: dict[str, DataSource] = {}
    for task, config in (results.get("configs") or {}).items():
        meta = (config or {}).get("metadata") or {}
        source = _RECORDED.get(str(meta.get("config_source")))
        if source is not None:
            found[task] = source
    return found


def results_section(sources: dict[str, DataSource]) -> dict[str, Any]:
    """The JSON written under ``prb.data_sources``: task -> kind, location, subset, rows."""
    return {task: asdict(source) for task, source in sorted(sources.items())}


def summary_lines(sources: dict[str, DataSource]) -> list[str]:
    """One line per data source, with the rows read per subset."""
    by_place: dict[tuple[str, str], dict[str, int]] = {}
    for source in sources.values():
        by_place.setdefault((source.kind, source.location), {})[source.subset] = source.rows
    lines = []
    for (kind, location), subsets in sorted(by_place.items()):
        # A task reading several subsets at once records them as "a+b+c"; when each is
        # also listed on its own, those rows are already counted.
        subsets = {name: rows for name, rows in subsets.items()
                   if "+" not in name or not all(part in subsets for part in name.split("+"))}
        counts = ", ".join(f"{name} {rows:,}" for name, rows in sorted(subsets.items()))
        note = " (written for this project: its numbers say nothing about the benchmark)" if kind == "sample" else ""
        lines.append(f"Data: {_label(kind, location)}{note}: {counts} rows ({sum(subsets.values()):,} in total)")
    return lines


"""Which data a run was evaluated on: the bundled sample, a local folder or the HF hub.

Pairs are matched across runs only within one data source (a local copy may differ
from the hub). This is the one place that decides it, so it can later read a source
recorded by ``prb eval`` itself instead.
"""

from __future__ import annotations

from typing import Any

SAMPLE = "sample"
HUB = "hub"
LOCAL_PREFIX = "local:"
BUNDLED_PREFIX = "bundled:"


def data_source(configs: dict[str, Any], task: str, recorded: dict[str, Any] | None = None) -> str:
    """``sample``, ``bundled:<name>``, ``local:<folder>`` or ``hub`` for one task of a results file.

    Args:
        configs: the results file's ``configs`` section (task -> task config).
        task: a leaf task name.
        recorded: the results file's ``prb.data_sources`` section, written by ``prb eval``
            (it also knows about ``PRB_DATA_DIR``); absent for plain ``lm_eval`` runs.

    Without a record, a run that relied on ``PRB_DATA_DIR`` is reported as ``hub``.
    """
    entry = (recorded or {}).get(task)
    if isinstance(entry, dict) and entry.get("kind") in (SAMPLE, "local", "file", HUB):
        if entry["kind"] in ("local", "file"):
            return f"{LOCAL_PREFIX}{entry.get('location', '')}"
        return str(entry["kind"])
    config = configs.get(task) or {}
    kwargs = config.get("dataset_kwargs") or {}
    metadata = config.get("metadata") or {}
    if kwargs.get("source") == SAMPLE or metadata.get("data_dir") == SAMPLE:
        return SAMPLE
    if kwargs.get("source"):  # a task fixed to data shipped with prb (e.g. an example file)
        return f"{BUNDLED_PREFIX}{kwargs['source']}"
    if metadata.get("data_dir"):
        return f"{LOCAL_PREFIX}{metadata['data_dir']}"
    return HUB


def describe(source: str) -> str:
    """The source in words, for headings."""
    if source == SAMPLE:
        return "bundled synthetic sample"
    if source.startswith(BUNDLED_PREFIX):
        return f"bundled {source.removeprefix(BUNDLED_PREFIX)} data"
    if source.startswith(LOCAL_PREFIX):
        return f"local copy {source.removeprefix(LOCAL_PREFIX)}"
    return "HF hub"

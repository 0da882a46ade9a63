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


def data_source(configs: dict[str, Any], task: str) -> str:
    """``sample``, ``local:<folder>`` or ``hub`` for one task of a results file.

    Args:
        configs: the results file's ``configs`` section (task -> task config).
        task: a leaf task name.

    A run that relied on ``PRB_DATA_DIR`` is not recorded as such by lm-eval and is
    reported as ``hub``.
    """
    config = configs.get(task) or {}
    kwargs = config.get("dataset_kwargs") or {}
    metadata = config.get("metadata") or {}
    if kwargs.get("source") == SAMPLE or metadata.get("data_dir") == SAMPLE:
        return SAMPLE
    folder = kwargs.get("source") or metadata.get("data_dir")
    if folder:
        return f"{LOCAL_PREFIX}{folder}"
    return HUB


def describe(source: str) -> str:
    """The source in words, for headings."""
    if source == SAMPLE:
        return "bundled synthetic sample"
    if source.startswith(LOCAL_PREFIX):
        return f"local copy {source.removeprefix(LOCAL_PREFIX)}"
    return "HF hub"

"""What the general RM benchmarks' document builders share: recording where a part's rows
came from, and stopping when the copy holds none of them.

RewardBench 2 picks a subset, RM-Bench a domain; both read a local copy or the hub and
note the source for the report (:mod:`prb_tasks.data.provenance`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from prb_tasks.data import provenance
from prb_tasks.data.errors import DataError
from prb_tasks.documents.metadata import task_name


@dataclass(frozen=True)
class Benchmark:
    """One general benchmark, as its builder names it in provenance and errors.

    Attributes:
        title: its name in messages (``RM-Bench``).
        hf_repo: the hub dataset (``THU-KEG/RM-Bench``).
        split: the hub split read (``train``).
        part_kind: what a task picks (``subset``, ``domain``).
        whole: what to fetch when a part is missing, ending the error line.
    """

    title: str
    hf_repo: str
    split: str
    part_kind: str
    whole: str


def record_part(kwargs: dict[str, Any], bench: Benchmark, folder: Optional[Path], part: str, picked: int,
                default_task: str, found: Iterable[str]) -> None:
    """Note the source of one part's rows; raise one line when it has none.

    Args:
        kwargs: the task's ``--metadata`` keys (provenance is recorded under its task).
        bench: the benchmark.
        folder: the local copy read, or None for the hub.
        part: the subset or domain, as shown (``Precise IF``, ``chat``).
        picked: how many of the copy's rows belong to it.
        default_task: the task named when lm-eval did not pass one.
        found: the parts the copy holds (named when ``part`` has no rows).
    """
    kind: provenance.Kind = "hub" if folder is None else "local"
    where = bench.hf_repo if folder is None else str(folder)
    provenance.record(kwargs, provenance.DataSource(kind, where, f"{bench.split}: {part}", picked),
                      task_name(kwargs) or default_task)
    if picked:
        return
    place = "the HF hub" if folder is None else str(folder)
    held = ", ".join(sorted(set(found))) or "none"
    raise DataError(f"prb: {bench.title} in {place} has no rows of {bench.part_kind} '{part}' (it holds {held}); "
                    f"{bench.whole}")

"""RM-Bench as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prb_tasks.data.counts import print_checked, row_problems
from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.data.rmbench.schema import domain_of
from prb_tasks.data.rmbench.sources import EXPECTED_ROWS, FILE_NAME, HF_REPO, data_file, read_file


def validate(folder: Path, bundled: bool = False) -> int:
    """Check a local copy (``total_dataset.json``); print rows per domain.

    Args:
        folder: the copy's folder.
        bundled: unused (RM-Bench ships no sample).
    """
    def read(path: Path) -> tuple[Counter[str], list[str]]:
        rows = read_file(data_file(path))
        # The authors score a row by domain.startswith(d): safety-refuse is safety, "chats" is chat.
        return Counter(row.domain for row in rows), row_problems(
            path, ((r.index, r.domain, r.id) for r in rows), "domain", lambda d: domain_of(d) is not None,
            "chat, math, code, safety-*")

    return print_checked(folder, "RM-Bench domain", EXPECTED_ROWS, read)


def looks_like(path: Path) -> bool:
    """The authors' RM-Bench file: ``total_dataset.json`` in the folder or its ``data/``."""
    return (path / FILE_NAME).is_file() or (path / "data" / FILE_NAME).is_file()


FAMILY = BenchmarkFamily(
    name="rmbench",
    order=50,
    validate=validate,
    documents=("prb_tasks.documents.rmbench",),
    options="prb_tasks.documents.rmbench:RMBenchOptions",
    task_folders=("rmbench",),
    commands=frozenset({"download", "validate"}),
    detect=looks_like,
    detect_order=20,
    hub_repo=HF_REPO,
    hub_files=("*.json", "README.md"),  # the hub repository's one JSON file
    whole="rmbench is downloaded whole",
)

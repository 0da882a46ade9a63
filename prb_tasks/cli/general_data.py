"""``prb data download`` / ``prb data validate`` for the general RM benchmarks (RewardBench 2, RM-Bench)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from prb_tasks.data.errors import DataError

FAMILIES = ("rewardbench2", "rmbench")


def download(target: Path, family: str) -> int:
    """Copy a general benchmark's files into ``target`` in the hub's layout, then check them.

    Args:
        target: destination folder (created).
        family: ``rewardbench2`` (``data/test-*.parquet``) or ``rmbench`` (``total_dataset.json``,
            the hub repository's one JSON file).
    """
    from prb_tasks.cli.datatools import _snapshot

    if family == "rewardbench2":
        from prb_tasks.data.rewardbench2.sources import DATA_FOLDER, HF_REPO, HF_SPLIT

        patterns = [f"{DATA_FOLDER}/{HF_SPLIT}-*", "README.md"]
    else:
        from prb_tasks.data.rmbench.sources import HF_REPO

        patterns = ["*.json", "README.md"]
    return _snapshot(HF_REPO, patterns, target) or validate(target, family)


def validate(folder: Path, family: str) -> int:
    """Check a local copy; print rows per subset (domain); return a process exit code."""
    if not folder.is_dir():
        print(f"prb: '{folder}' is not a folder", file=sys.stderr)
        return 2
    try:
        if family == "rewardbench2":
            from prb_tasks.data.rewardbench2.sources import EXPECTED_ROWS, read_folder

            counts = Counter(row.subset for row in read_folder(folder))
            title = "RewardBench 2 subset"
        else:
            from prb_tasks.data.rmbench.sources import EXPECTED_ROWS, data_file, read_file

            counts = Counter(row.domain for row in read_file(data_file(folder)))
            title = "RM-Bench domain"
    except DataError as exc:
        print(str(exc))
        return 1
    total = sum(counts.values())
    print(f"{title:<38} {'rows':>6}")
    for name, count in sorted(counts.items()):
        print(f"{name:<38} {count:>6}")
    note = "ok" if total == EXPECTED_ROWS else (
        f"ok (the published data has {EXPECTED_ROWS}; this is a partial or different copy)")
    print(f"{'total':<38} {total:>6}  {note}")
    return 0

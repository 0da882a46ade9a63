"""The row-count table ``prb data validate`` prints for a general benchmark's copy."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from prb_tasks.data.errors import DataError


def print_counts(folder: Path, title: str, expected: int, count: Callable[[Path], Counter[str]]) -> int:
    """Print rows per group of a local copy and the total; return a process exit code.

    Args:
        folder: the copy's folder.
        title: the first column's heading (``RewardBench 2 subset``).
        expected: the published number of rows (a different total is noted, not refused).
        count: reads the copy and counts its rows per group; a bad copy raises DataError.
    """
    if not folder.is_dir():
        print(f"prb: '{folder}' is not a folder", file=sys.stderr)
        return 2
    try:
        counts = count(folder)
    except DataError as exc:
        print(str(exc))
        return 1
    total = sum(counts.values())
    print(f"{title:<38} {'rows':>6}")
    for name, rows in sorted(counts.items()):
        print(f"{name:<38} {rows:>6}")
    note = "ok" if total == expected else (
        f"ok (the published data has {expected}; this is a partial or different copy)")
    print(f"{'total':<38} {total:>6}  {note}")
    return 0

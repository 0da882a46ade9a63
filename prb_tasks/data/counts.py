"""What ``prb data validate`` prints for every family: a copy that cannot be read, rows per group."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from prb_tasks.data.errors import DataError

T = TypeVar("T")


def read_copy(path: Path, read: Callable[[Path], T], want: str = "folder") -> tuple[T | None, int]:
    """Read a local copy for ``prb data validate``, or say in one line why it cannot be read.

    Args:
        path: the copy (a folder, or a file when ``want`` is ``"file"``).
        read: reads the copy; a bad copy raises DataError, whose message is printed.
        want: ``"folder"`` or ``"file"``: what ``path`` must be.

    Returns:
        ``(what read returned, 0)``, or ``(None, exit code)``: 2 when ``path`` is not a
        ``want``, 1 when the copy is bad.
    """
    if not (path.is_file() if want == "file" else path.is_dir()):
        print(f"prb: '{path}' is not a {want}", file=sys.stderr)
        return None, 2
    try:
        return read(path), 0
    except DataError as exc:
        print(str(exc))
        return None, 1


def print_table(title: str, counts: Counter[str], expected: int, published: str = "the published data") -> None:
    """Print rows per group and the total, noting a total that differs from the published one.

    Args:
        title: the first column's heading.
        counts: rows per group.
        expected: the published number of rows.
        published: how the note names the published data.
    """
    total = sum(counts.values())
    print(f"{title:<38} {'rows':>6}")
    for name, rows in sorted(counts.items()):
        print(f"{name:<38} {rows:>6}")
    note = "ok" if total == expected else (
        f"ok ({published} has {expected}; this is a partial or different copy)")
    print(f"{'total':<38} {total:>6}  {note}")


def print_counts(folder: Path, title: str, expected: int, count: Callable[[Path], Counter[str]]) -> int:
    """Print rows per group of a local copy and the total; return a process exit code.

    Args:
        folder: the copy's folder.
        title: the first column's heading (``RewardBench 2 subset``).
        expected: the published number of rows (a different total is noted, not refused).
        count: reads the copy and counts its rows per group; a bad copy raises DataError.
    """
    counts, code = read_copy(folder, count)
    if counts is None:
        return code
    print_table(title, counts, expected)
    return 0

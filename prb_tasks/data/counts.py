"""What ``prb data validate`` prints for every family: a copy that cannot be read, rows per group."""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
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


#: Duplicate ids named one by one before the rest are counted.
SHOWN_DUPLICATES = 5


def row_problems(where: Path, rows: Iterable[tuple[int, str, str]], group: str, known: Callable[[str], bool],
                 known_names: str) -> list[str]:
    """What ``prb data validate`` says about rows a loader reads without complaint but no
    task scores right: the same id twice in a group, and groups the benchmark does not have.

    Args:
        where: the copy, for the messages.
        rows: ``(index, group, id)`` per row (index 0-based, shown from 1).
        group: what a group is called (``subset``, ``domain``).
        known: whether a group name is one of the benchmark's.
        known_names: the benchmark's groups, as the message lists them.
    """
    seen: dict[tuple[str, str], list[int]] = defaultdict(list)
    unknown: Counter[str] = Counter()
    for index, name, row_id in rows:
        seen[(name, row_id)].append(index + 1)
        if not known(name):
            unknown[name] += 1
    twice = [(key, at) for key, at in seen.items() if len(at) > 1]
    lines = [f"prb: {where}: id '{row_id}' appears {len(at)} times in {group} {name} (rows "
             f"{', '.join(map(str, at[:5]))}{', ...' if len(at) > 5 else ''}); keep one, or download the data again"
             for (name, row_id), at in twice[:SHOWN_DUPLICATES]]
    if len(twice) > SHOWN_DUPLICATES:
        lines.append(f"prb: {where}: ... and {len(twice) - SHOWN_DUPLICATES:,} more ids appear more than once")
    lines += [f"prb: {where}: {group} '{name}' ({rows_} row{'s' * (rows_ != 1)}) is none of the benchmark's "
              f"({known_names}), so no task scores it; fix the {group} or download the data again"
              for name, rows_ in sorted(unknown.items())]
    return lines


def print_checked(folder: Path, title: str, expected: int,
                  read: Callable[[Path], tuple[Counter[str], list[str]]]) -> int:
    """:func:`print_counts` for a family that also checks its rows (:func:`row_problems`):
    the table, then each problem; exit code 1 when there is one.

    Args:
        folder: the copy's folder.
        title: the first column's heading.
        expected: the published number of rows.
        read: reads the copy; returns rows per group and the problems found.
    """
    found, code = read_copy(folder, read)
    if found is None:
        return code
    counts, problems = found
    print_table(title, counts, expected)
    for line in problems:
        print(line)
    return 1 if problems else 0


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

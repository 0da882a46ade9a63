"""Fit prb's default text output into a terminal 120 columns wide.

Every command's default output (tables, legends, hints, ``--help``) goes through ``fit`` before it
is printed: a line longer than ``WIDTH`` is wrapped by words, its continuation lines indented
under the line's own text, so a legend entry ``  key: explanation`` stays readable as a block.
Words are never split: a path or URL longer than a line stays whole.
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

WIDTH = 120

# Where a continuation line starts: under the text after "  key: " of a legend entry, or under
# the text after a leading "- " / "* " bullet; else two columns in from the line's own indent.
_HANG = re.compile(r"^(\s*(?:[-*] |[A-Za-z0-9_%.*/ ()-]{1,40}: ))")


def wrap_line(line: str, width: int = WIDTH) -> list[str]:
    """One line as lines of at most ``width`` columns, broken between words.

    Args:
        line: a line without its newline.
        width: the most columns a line may take.
    """
    if len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    hang = _HANG.match(line)
    rest = len(hang.group(1)) if hang and len(hang.group(1)) <= width // 3 else indent + 2
    return textwrap.wrap(line, width=width, initial_indent="", subsequent_indent=" " * rest,
                         break_long_words=False, break_on_hyphens=False, drop_whitespace=True) or [line]


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` with each line longer than ``width`` wrapped by words (see ``wrap_line``).

    Args:
        text: the output, lines separated by newlines.
        width: the most columns a line may take.
    """
    return "\n".join(part for line in text.split("\n") for part in wrap_line(line, width))


def fit_lines(lines: list[str], width: int = WIDTH) -> list[str]:
    """``lines`` with each line longer than ``width`` wrapped by words (see ``wrap_line``).

    Args:
        lines: the output lines, without newlines.
        width: the most columns a line may take.
    """
    return [part for line in lines for part in wrap_line(line, width)]


def wrap_units(text: str, width: int = WIDTH, first: str = "", rest: str = "  ") -> list[str]:
    """``text`` broken into lines of at most ``width`` columns only at plain spaces: a unit whose
    words are joined by non-breaking spaces (``\\xa0``, e.g. ``60%\\xa088.0``) stays on one line, and
    its non-breaking spaces come back as plain ones.

    Args:
        text: one line, its units glued with ``\\xa0``.
        width: the most columns a line may take.
        first: the first line's indent.
        rest: the indent of the lines after it.
    """
    return [part.replace("\xa0", " ") for part in textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False)]


def column_parts(widths: list[int], width: int = WIDTH, keep: int = 1) -> list[list[int]]:
    """A table's columns in parts that each fit ``width`` columns beside its first ``keep`` columns
    (repeated in every part, so each number keeps its row's name); one part when the table fits.

    Args:
        widths: each column's width in characters.
        width: the most columns a line may take.
        keep: how many leading columns every part repeats.
    """
    base = sum(widths[:keep]) + 2 * max(keep - 1, 0)
    parts: list[list[int]] = [[]]
    used = base
    for column in range(keep, len(widths)):
        if parts[-1] and used + 2 + widths[column] > width:
            parts.append([])
            used = base
        parts[-1].append(column)
        used += 2 + widths[column]
    return [[*range(keep), *part] for part in parts]


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working folder when it lies inside it (a run's files under
    ``--output_path runs``), else as given: the line naming it then fits a terminal.

    Args:
        path: the path to show.
    """
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (OSError, ValueError):  # outside the working folder, or no working folder
        return str(path)

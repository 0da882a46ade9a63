"""Rows the original scripts accept but a careful reader should know about.

Nobody outside the authors has audited the published data, and a run that stops on
the real benchmark is the worst failure we can have; so only a row that is
structurally broken (missing field, wrong type) stops a run. Everything below keeps
the row and is reported once per kind, with a count, the first row numbers (counted
from 1, as in error messages and like lines of a .jsonl file) and what it means for the numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

#: Row numbers listed in a warning before "...".
SHOWN_ROWS = 5


@dataclass(frozen=True)
class RowWarning:
    """One kind of odd row found in a subset.

    Attributes:
        kind: short name, e.g. ``duplicate id``.
        rows: 0-based row numbers in dataset order.
        meaning: what these rows do to the metrics.
    """

    kind: str
    rows: tuple[int, ...]
    meaning: str

    def line(self, origin: str) -> str:
        """The one-line warning, naming where the rows are."""
        shown = ", ".join(str(n + 1) for n in self.rows[:SHOWN_ROWS])  # shown from 1, like lines
        more = ", ..." if len(self.rows) > SHOWN_ROWS else ""
        noun = "row" if len(self.rows) == 1 else "rows"
        return (f"prb: warning: {origin}: {len(self.rows)} {noun} with {self.kind} "
                f"({noun} {shown}{more}); {self.meaning}")


class _Row(Protocol):
    """What the checks read of a row: a :class:`~prb_tasks.data.personalized_rb.schema.PRBRow`
    or a columnar :class:`~prb_tasks.data.personalized_rb.columnar.PairRow`."""

    @property
    def id(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def chosen(self) -> str: ...
    @property
    def rejected(self) -> str: ...


def _blank(text: str) -> bool:
    return not text.strip()


_KINDS: tuple[tuple[str, Callable[[_Row], bool], str], ...] = (
    ("a blank id", lambda r: _blank(r.id),
     "kept; pairs are keyed by subset and row number, never by id"),
    ("a blank question", lambda r: _blank(r.question),
     "kept; judges and RMs see the two answers with no question, so these pairs test the answers alone"),
    ("a blank chosen or rejected answer", lambda r: _blank(r.chosen) or _blank(r.rejected),
     "kept; the other answer is compared with an empty text"),
    ("chosen == rejected", lambda r: r.chosen.strip() == r.rejected.strip(),
     "kept; the two answers are the same text (up to surrounding whitespace): a scalar RM scores them "
     "alike (an exact tie counts wrong) and a judge can only go by position"),
)


def find_warnings(rows: Sequence[_Row]) -> list[RowWarning]:
    """Every kind of odd row in ``rows`` (one subset, dataset order), in a fixed order.

    Args:
        rows: validated rows of one subset.
    """
    found: list[RowWarning] = []
    first_seen: dict[str, int] = {}
    repeats: list[int] = []
    for index, row in enumerate(rows):
        if row.id in first_seen:
            repeats.append(index)
        else:
            first_seen[row.id] = index
    if repeats:
        found.append(RowWarning(
            "duplicate id", tuple(repeats),
            "kept as separate pairs (each repeats an earlier row's id), keyed by subset and row number, "
            "never by id (the original scalar script keys scores by id and keeps only the last such row)",
        ))
    for kind, test, meaning in _KINDS:
        hits = tuple(n for n, row in enumerate(rows) if test(row))
        if hits:
            found.append(RowWarning(kind, hits, meaning))
    return found


def print_warnings(rows: Sequence[_Row], origin: str) -> list[RowWarning]:
    """Print :func:`find_warnings` for ``rows`` to stderr, one line per kind.

    Args:
        rows: validated rows of one subset.
        origin: where they came from (folder or dataset name), named in each line.

    Returns:
        the warnings printed.
    """
    found = find_warnings(rows)
    for warning in found:
        print(warning.line(origin), file=sys.stderr, flush=True)
    return found

"""CSV records exactly as ``csv.reader(lines, strict=True)`` gives them, cheaper on well-formed files.

The ``csv`` module reads a file a character at a time: on Community Alignment's 585 MB file at
release size that was about 2.4 s of CPU, half of reading it. Here each line is split at its quote
characters instead (``str.split`` runs in C over the whole line) and only the pieces between quotes
are looked at in Python. Whatever this reading is not sure ``csv`` reads the same way (a quote
inside an unquoted cell, text after a closing quote, a carriage return or a NUL outside the line
break, a file that ends inside a quoted cell, a record longer than the field size limit) hands the
rest of the file, from the start of that record, to ``csv.reader``, which then reads it or refuses
it with its own error exactly as if it had read the whole file. A line is taken only when ``csv``
would take it too (the record so far leaves both inside a quoted cell), so a line that cannot be
decoded, or is too long, stops both at the same place.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from itertools import chain


class _Unsure(Exception):
    """``csv`` might read this record otherwise, or refuse it: it reads this record and the rest."""


def _cells(into: list[str], text: str) -> None:
    # Unquoted cells: a carriage return here ends a record for csv, or is refused by it.
    if "\r" in text:
        raise _Unsure
    into.extend(text.split(","))


def _bare(line: str) -> str:
    return line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith("\n") else line


class _Record:
    """One record read a line at a time: its finished cells, the pieces of the quoted cell under
    way, and whether the last line ended inside that cell."""

    __slots__ = ("cells", "quoted", "inside", "size")

    def __init__(self) -> None:
        self.cells: list[str] = []
        self.quoted: list[str] = []
        self.inside = False
        self.size = 0

    def feed(self, line: str, limit: int) -> bool:
        """Read the record's next line; True when the record ends with it.

        Raises:
            _Unsure: see the module's docstring.
        """
        self.size += len(line)
        if self.size > limit or "\0" in line:
            raise _Unsure
        parts = line.split('"')
        last = len(parts) - 1
        cells, quoted = self.cells, self.quoted
        # The parts alternate outside and inside quotes; a line that goes on with a quoted cell starts inside.
        inside = self.inside
        for index, part in enumerate(parts):
            if inside:
                quoted.append(part)
                inside = False
            elif index == 0:
                # The record's first line: unquoted cells, up to the quote that opens a quoted cell.
                if last == 0:
                    bare = _bare(part)
                    if bare:  # an empty line is an empty record, as csv gives it
                        _cells(cells, bare)
                    return True
                if part:
                    if part[-1] != ",":
                        raise _Unsure  # a quote inside an unquoted cell
                    _cells(cells, part[:-1])
                inside = True
            elif index == last:
                # After the line's last (closing) quote: the record ends here.
                bare = _bare(part)
                cells.append("".join(quoted))
                quoted.clear()
                if bare:
                    if bare[0] != ",":
                        raise _Unsure  # text after a closing quote
                    _cells(cells, bare[1:])
                return True
            elif not part:
                quoted.append('"')  # a doubled quote: one quote in the cell, which goes on
                inside = True
            else:
                # Between a closing quote and the next opening one: a comma, maybe unquoted cells and a comma.
                if part[0] != "," or (len(part) > 1 and part[-1] != ","):
                    raise _Unsure
                cells.append("".join(quoted))
                quoted.clear()
                if len(part) > 1:
                    _cells(cells, part[1:-1])
                inside = True
        self.inside = True  # the line ended inside a quoted cell: the record goes on with the next line
        return False


def records(lines: Iterable[str]) -> Iterator[list[str]]:
    """The records of ``lines`` (a file's lines, line breaks kept), as ``csv.reader(lines, strict=True)``
    with the default dialect gives them: the same cells, the same empty records for empty lines, the
    same :class:`csv.Error` where it refuses the file. The field size limit is ``csv``'s, when called.

    Args:
        lines: the file's lines, each with its line break (the last one may lack it).
    """
    limit = csv.field_size_limit()
    source = iter(lines)
    for line in source:
        record = _Record()
        taken = [line]
        try:
            done = record.feed(line, limit)
            while not done:
                following = next(source, None)
                if following is None:
                    raise _Unsure  # the file ends inside a quoted cell
                taken.append(following)
                done = record.feed(following, limit)
        except _Unsure:
            yield from csv.reader(chain(taken, source), strict=True)
            return
        yield record.cells

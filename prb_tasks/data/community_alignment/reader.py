"""Read a local Community Alignment copy (``community_alignment.csv``, or the first release's
``data/filtered_community_alignment.csv`` and ``data/full_community_alignment.csv``) into people
and their choices.

One row is one annotator's conversation of up to four turns. In each turn the annotator saw
up to four responses (``<turn>_turn_response_a`` .. ``_d``) and named the one they preferred
(``<turn>_turn_preferred_response``: ``response_a`` .. ``response_d``), sometimes with a written
reason (``<turn>_turn_feedback``); the conversation went on from the preferred response. The
preferred response against each other non-empty response of the turn is a labelled pair. A
turn without a prompt ends the conversation; a turn with a prompt but no preference, or with
one other response, gives no pair and is counted.
"""

from __future__ import annotations

import csv
import os
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prb_tasks.common.csv_records import records
from prb_tasks.common.textfiles import bounded_lines
from prb_tasks.data.community_alignment.constants import (
    ATTRIBUTES,
    EMPTY_MARK,
    END_OF_TEXT,
    FILES,
    LETTERS,
    SPLITS,
    TURNS,
)
from prb_tasks.data.errors import DataError
from prb_tasks.data.people import Choice, Person, transcript
from prb_tasks.data.rawfiles import check_file

FAMILY = "community_alignment"
#: How ``skipped`` names what was left out (keys naming pairs or answers are not turns: see summary_lines).
PLACEHOLDER = "answers that are the release's \"EMPTY STRING\" placeholder for an empty answer"
EMPTY_PREFERRED = "whose preferred response is empty (the rest of the row skipped)"
BAD_PREFERENCE = "whose preferred response names no response (the rest of the row skipped)"
REQUIRED = ("conversation_id", "annotator_id", "assigned_lang", "first_turn_prompt", "first_turn_preferred_response",
            "first_turn_response_a", "first_turn_response_b")


@dataclass(frozen=True)
class CommunityCopy:
    """What a Community Alignment file holds, as prb reads it.

    Attributes:
        path: the CSV file read.
        people: annotators with at least one labelled pair, in order of first appearance.
        conversations: rows of the file.
        skipped: turns that gave no pair and answers left out, by why.
        first_bad: for each kind of row skipped as unreadable, where the first one is (row, conversation, field).
    """

    path: Path
    people: tuple[Person, ...]
    conversations: int
    skipped: Counter[str]
    first_bad: dict[str, str] = field(default_factory=dict)


def data_file(folder: Path, split: str) -> Path:
    """The CSV of ``split`` in a copy's folder.

    Args:
        folder: the copy (its top folder, as the hub has it).
        split: ``auto`` (the first present of ``community_alignment.csv``, the filtered and the
            full file), ``latest`` (``community_alignment.csv``), ``filtered`` or ``full``.
    """
    if split not in SPLITS:
        raise DataError(f"prb: unknown Community Alignment split '{split}'; expected one of {', '.join(SPLITS)}")
    names = list(FILES.values()) if split == "auto" else [FILES[split]]
    for name in names:
        if _present(folder / name):
            return folder / name
    present = [key for key, name in FILES.items() if _present(folder / name)]
    if present:
        raise DataError(f"prb: {folder} has no {FILES[split]}; it has {', '.join(FILES[k] for k in present)}: "
                        f"give split {' or '.join(present)} (or auto)")
    raise DataError(f"prb: {folder} has no {' or '.join(names)}; give the folder of a copy in the HF layout "
                    f"(`prb data download DIR --family {FAMILY}` makes one)")


def _present(path: Path) -> bool:
    # A named pipe in the file's place counts as present: reading it then says what it is (check_file).
    return os.path.lexists(path) and not path.is_dir()


def _cell(row: dict[str, str | None], name: str) -> str:
    return (row.get(name) or "").strip()


def _response(row: dict[str, str | None], name: str, skipped: Counter[str]) -> str:
    # Public loaders of the release read this placeholder as no response, and strip the generator's
    # end-of-text token some answers end with: neither is part of the answer a person read.
    text = (row.get(name) or "").replace(END_OF_TEXT, "")
    if text.strip() == EMPTY_MARK:
        skipped[PLACEHOLDER] += 1
        return ""
    return text


#: Per turn: its prompt, preferred-response, lettered response and feedback columns (named once, not per row).
_TURN_COLUMNS = tuple((turn, (f"{turn}_turn_prompt", f"{turn}_turn_preferred_response",
                              tuple((x, f"{turn}_turn_response_{x}") for x in LETTERS), f"{turn}_turn_feedback"))
                      for turn in TURNS)


class BadRow(Exception):
    """A row a published file holds but no pair can be read from: skipped and counted, never guessed."""


def row_choices(row: dict[str, str | None], where: str, path: Path, skipped: Counter[str]) -> list[Choice]:
    """The labelled pairs of one conversation row.

    Args:
        row: the CSV row (column -> text; empty or None where the cell is empty).
        where: ``row 3`` for messages.
        path: the file, for messages.
        skipped: counts the turns that give no pair and the answers left out, by why (added to).

    Raises:
        BadRow: a turn names a preferred response that is not one (its message says where); the
            turns before it keep their pairs, the caller counts the rest of the row as skipped.
    """
    # Interned: every row repeats its person's id and one of a few languages, and each pair keeps the language.
    conv, person = _cell(row, "conversation_id"), sys.intern(_cell(row, "annotator_id"))
    lang = sys.intern(_cell(row, "assigned_lang"))
    out: list[Choice] = []
    earlier: list[tuple[str, str]] = []
    for turn, (prompt_column, preferred_column, response_columns, feedback_column) in _TURN_COLUMNS:
        message = _cell(row, prompt_column)
        if not message:
            break
        preferred = _cell(row, preferred_column)
        if not preferred:
            skipped["without a preferred response"] += 1
            break  # the conversation went on from an answer we cannot name
        letter = preferred.removeprefix("response_").lower()
        if letter not in LETTERS or not preferred.startswith("response_"):
            raise BadRow(f"{where} (conversation {conv!r}), field '{preferred_column}': {preferred[:40]!r} is not "
                         "one of response_a .. response_d", out)
        responses = {x: _response(row, column, skipped) for x, column in response_columns}
        best = responses[letter]
        if not best.strip():
            raise BadRow(f"{where} (conversation {conv!r}), field '{turn}_turn_response_{letter}': empty, but "
                         f"{preferred_column} names it", out)
        prompt = transcript(earlier, message)
        kept = best.strip()
        others = [(x, text) for x, text in responses.items() if x != letter and (bare := text.strip()) and bare != kept]
        if not others:
            skipped["with one response"] += 1
        reason = _cell(row, feedback_column)
        interaction = f"{conv}/{turn}"  # one string for the turn's pairs
        for x, text in others:
            out.append(Choice(key=f"{person}/{conv}/{turn}/{x}", group=conv, interaction=interaction,
                              prompt=prompt, chosen=best, rejected=text, reason=reason, language=lang,
                              chosen_first=LETTERS.index(letter) < LETTERS.index(x)))
        earlier.append((message, best))
    return out


#: The longest physical line of a Community Alignment CSV read (its longest row is well under 1 MiB).
MAX_LINE_BYTES = 32 * 2**20


def _lines(handle: Any, path: Path) -> Iterator[str]:
    """The file's lines as text, none read past :data:`MAX_LINE_BYTES` (a file of gigabytes without
    a line break is refused, not read whole); a UTF-8 byte-order mark (Excel's "CSV UTF-8") is dropped."""
    for number, raw in enumerate(bounded_lines(handle, path, "data file", MAX_LINE_BYTES, DataError)):
        yield raw.decode("utf-8-sig" if number == 0 else "utf-8")


def read_community(path: Path) -> CommunityCopy:
    """Read and validate one Community Alignment CSV file.

    A row no pair can be read from (a published file may hold one: a preferred response that is
    empty) is skipped and counted, the first named; a file that is broken (cut short, a conversation
    twice, a row of the wrong width) is refused in one line.

    Args:
        path: one of the copy's CSV files (a folder: the file :func:`data_file` picks for ``auto``).

    Raises:
        DataError: the file is missing, lacks a column or has a bad row (one line: file, row, field).
    """
    if path.is_dir():
        path = data_file(path, "auto")
    check_file(path)
    people: dict[str, tuple[dict[str, str], list[Choice]]] = {}
    skipped: Counter[str] = Counter()
    first_bad: dict[str, str] = {}
    seen: dict[str, int] = {}
    count = 0
    # Responses and feedback are long cells. The limit is process-wide: put it back, or every later CSV read in
    # this process (prb validity's --scores, a custom file) silently accepts cells it should refuse.
    limit = csv.field_size_limit(MAX_LINE_BYTES)
    try:
        # A large buffer: the rows are long lines (about 18 KB each at release size), which the default 8 KiB
        # buffer reads in pieces and joins.
        with path.open("rb", buffering=2**20) as handle:
            # As csv.DictReader(lines, strict=True) reads it (strict: a quoted cell still open at the end of the
            # file, a file cut mid-cell, is an error), the records read by csv_records (csv's cells, cheaper).
            rows = records(_lines(handle, path))
            fieldnames = next(rows, None) or []
            missing = [c for c in REQUIRED if c not in fieldnames]
            if missing:
                # Bytes that are not UTF-8 say so first (the header may be mangled by them): read on to the next
                # row that is not empty, as csv.DictReader would.
                next((cells for cells in rows if cells), None)
                raise DataError(f"prb: {path}: no column {', '.join(missing)} in its header; is this the Community "
                                f"Alignment CSV (community_alignment.csv)?")
            width = len(fieldnames)
            number = 0
            for cells in rows:
                if not cells:
                    continue  # an empty line: csv.DictReader skips it, uncounted
                number += 1
                where = f"row {number}"
                row: dict[Any, Any] = dict(zip(fieldnames, cells))
                if len(cells) != width:
                    # As csv.DictReader: a short row is filled with None, a long row's extra cells go under None.
                    extra = cells[width:]
                    if extra:
                        row[None] = extra
                    for name in fieldnames[len(cells):]:
                        row[name] = None
                    short = sum(value is None for key, value in row.items() if key is not None)
                    raise DataError(f"prb: bad row in {path}, {where}: {width - short + len(extra)} cells where the "
                                    f"header has {width}; the file is cut short or broken: download it again")
                for column in ("conversation_id", "annotator_id"):
                    if not _cell(row, column):
                        raise DataError(f"prb: bad row in {path}, {where}: field '{column}': empty; fix the file")
                conv = _cell(row, "conversation_id")
                if conv in seen:
                    raise DataError(f"prb: bad row in {path}, {where}: field 'conversation_id': {conv!r} is also "
                                    f"row {seen[conv]}'s (a conversation twice would count its pairs twice); "
                                    "keep one, or download the data again")
                seen[conv] = number
                count += 1
                person = _cell(row, "annotator_id")
                attributes = {name: value for column, name in ATTRIBUTES if (value := _cell(row, column))}
                held = people.setdefault(person, (attributes, []))
                try:
                    held[1].extend(row_choices(row, where, path, skipped))
                except BadRow as bad:
                    message, kept = bad.args
                    held[1].extend(kept)
                    why = BAD_PREFERENCE if "is not one of" in message else EMPTY_PREFERRED
                    skipped[why] += 1
                    first_bad.setdefault(why, message)
    except UnicodeDecodeError as exc:
        raise DataError(f"prb: {path} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except csv.Error as exc:
        raise DataError(f"prb: {path}: not a readable CSV file ({exc}); the file may be cut short or broken: "
                        "download it again") from None
    finally:
        csv.field_size_limit(limit)
    if not count:
        raise DataError(f"prb: {path} holds no conversations")
    found = tuple(Person(pid, attrs, (), attrs.get("country", ""), tuple(choices))
                  for pid, (attrs, choices) in people.items() if choices)
    if not found:
        raise DataError(f"prb: {path}: no conversation has a turn with a preferred and another response")
    return CommunityCopy(path, found, count, skipped, first_bad)

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
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from prb_tasks.data.community_alignment.constants import ATTRIBUTES, EMPTY_MARK, FILES, LETTERS, SPLITS, TURNS
from prb_tasks.data.errors import DataError
from prb_tasks.data.people import Choice, Person, transcript
from prb_tasks.data.rawfiles import check_file

FAMILY = "community_alignment"
REQUIRED = ("conversation_id", "annotator_id", "assigned_lang", "first_turn_prompt", "first_turn_preferred_response",
            "first_turn_response_a", "first_turn_response_b")


@dataclass(frozen=True)
class CommunityCopy:
    """What a Community Alignment file holds, as prb reads it.

    Attributes:
        path: the CSV file read.
        people: annotators with at least one labelled pair, in order of first appearance.
        conversations: rows of the file.
        skipped: turns that gave no pair, by why.
    """

    path: Path
    people: tuple[Person, ...]
    conversations: int
    skipped: Counter[str]


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
        if (folder / name).is_file():
            return folder / name
    present = [key for key, name in FILES.items() if (folder / name).is_file()]
    if present:
        raise DataError(f"prb: {folder} has no {FILES[split]}; it has {', '.join(FILES[k] for k in present)}: "
                        f"give split {' or '.join(present)} (or auto)")
    raise DataError(f"prb: {folder} has no {' or '.join(names)}; give the folder of a copy in the HF layout "
                    f"(`prb data download DIR --family {FAMILY}` makes one)")


def _cell(row: dict[str, str | None], name: str) -> str:
    return (row.get(name) or "").strip()


def _response(row: dict[str, str | None], name: str) -> str:
    # Public loaders of the release read this placeholder as no response: never an answer to rank.
    text = row.get(name) or ""
    return "" if text.strip() == EMPTY_MARK else text


def row_choices(row: dict[str, str | None], where: str, path: Path, skipped: Counter[str]) -> list[Choice]:
    """The labelled pairs of one conversation row.

    Args:
        row: the CSV row (column -> text; empty or None where the cell is empty).
        where: ``row 3`` for messages.
        path: the file, for messages.
        skipped: counts the turns that give no pair, by why (added to).
    """
    conv, person, lang = _cell(row, "conversation_id"), _cell(row, "annotator_id"), _cell(row, "assigned_lang")
    out: list[Choice] = []
    earlier: list[tuple[str, str]] = []
    for turn in TURNS:
        message = _cell(row, f"{turn}_turn_prompt")
        if not message:
            break
        field = f"{turn}_turn_preferred_response"
        preferred = _cell(row, field)
        if not preferred:
            skipped["without a preferred response"] += 1
            break  # the conversation went on from an answer we cannot name
        letter = preferred.removeprefix("response_").lower()
        if letter not in LETTERS or not preferred.startswith("response_"):
            raise DataError(f"prb: bad row in {path}, {where} (conversation {conv!r}): field '{field}': "
                            f"{preferred!r} is not one of response_a, response_b, response_c, response_d; fix the file")
        responses = {x: _response(row, f"{turn}_turn_response_{x}") for x in LETTERS}
        best = responses[letter]
        if not best.strip():
            raise DataError(f"prb: bad row in {path}, {where} (conversation {conv!r}): field "
                            f"'{turn}_turn_response_{letter}': empty, but {field} names it; fix the file")
        prompt = transcript(earlier, message)
        others = [(x, text) for x, text in responses.items()
                  if x != letter and text.strip() and text.strip() != best.strip()]
        if not others:
            skipped["with one response"] += 1
        reason = _cell(row, f"{turn}_turn_feedback")
        for x, text in others:
            out.append(Choice(key=f"{person}/{conv}/{turn}/{x}", group=conv, interaction=f"{conv}/{turn}",
                              prompt=prompt, chosen=best, rejected=text, reason=reason, language=lang,
                              chosen_first=LETTERS.index(letter) < LETTERS.index(x)))
        earlier.append((message, best))
    return out


def read_community(path: Path) -> CommunityCopy:
    """Read and validate one Community Alignment CSV file.

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
    count = 0
    # Responses and feedback are long cells. The limit is process-wide: put it back, or every later CSV read in
    # this process (prb validity's --scores, a custom file) silently accepts cells it should refuse.
    limit = csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
            if missing:
                raise DataError(f"prb: {path}: no column {', '.join(missing)} in its header; is this the Community "
                                f"Alignment CSV (community_alignment.csv)?")
            for number, row in enumerate(reader, start=1):
                where = f"row {number}"
                for column in ("conversation_id", "annotator_id"):
                    if not _cell(row, column):
                        raise DataError(f"prb: bad row in {path}, {where}: field '{column}': empty; fix the file")
                count += 1
                person = _cell(row, "annotator_id")
                attributes = {name: _cell(row, column) for column, name in ATTRIBUTES if _cell(row, column)}
                held = people.setdefault(person, (attributes, []))
                held[1].extend(row_choices(row, where, path, skipped))
    except UnicodeDecodeError as exc:
        raise DataError(f"prb: {path} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except csv.Error as exc:
        raise DataError(f"prb: {path}: not a readable CSV file ({exc}); fix the file") from None
    finally:
        csv.field_size_limit(limit)
    if not count:
        raise DataError(f"prb: {path} holds no conversations")
    found = tuple(Person(pid, attrs, (), attrs.get("country", ""), tuple(choices))
                  for pid, (attrs, choices) in people.items() if choices)
    if not found:
        raise DataError(f"prb: {path}: no conversation has a turn with a preferred and another response")
    return CommunityCopy(path, found, count, skipped)

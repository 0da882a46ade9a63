"""Read users' text files (data, templates, configs, JSON Lines) as UTF-8, with a one-line error otherwise.

A file saved in another encoding (Latin-1, UTF-16, a Windows code page) or a binary file
given by mistake would raise :class:`UnicodeDecodeError` with a traceback; here it becomes
one line naming the file, the line and the first bad byte. A UTF-8 byte-order mark is
accepted and dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError

_BOM = b"\xef\xbb\xbf"

#: A JSON escape of a UTF-16 surrogate: valid JSON, and in a pair one character (how an emoji is escaped), but
#: alone it decodes to half a character that no UTF-8 text can hold (hashing or writing it later raises).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def lone_surrogate(value: Any) -> str | None:
    """A UTF-16 surrogate standing alone in a string of ``value`` (searched through lists and dicts, keys
    included), written ``\\udXXX``; None when there is none.

    Args:
        value: a parsed JSON value.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"\\u{ord(item[exc.start]):04x}"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


# The C scanner json.loads calls and the whitespace pattern around it (CPython's json module; where either is
# missing, json.loads itself).
_SCAN: Any = getattr(json.JSONDecoder(), "scan_once", None)
_SPACE: Any = getattr(getattr(json.decoder, "WHITESPACE", None), "match", None)


def _json(text: str) -> Any:
    """``json.loads(text)``: the same value, or the same error, without its two layers of Python calls
    around the C scanner (PRISM's copy at release size has 116,305 rows: about 5% of reading it)."""
    if _SCAN is None or _SPACE is None or text.startswith("\ufeff"):
        return json.loads(text)  # a byte-order mark is refused there, with its own message
    try:
        value, end = _SCAN(text, _SPACE(text, 0).end())
    except StopIteration as exc:
        raise json.JSONDecodeError("Expecting value", text, exc.value) from None
    if end != len(text) and _SPACE(text, end).end() != len(text):
        raise json.JSONDecodeError("Extra data", text, _SPACE(text, end).end())
    return value


def not_utf8(path: Path | str, what: str, line: int, data: bytes, exc: UnicodeDecodeError) -> str:
    """The one-line message for a file that is not UTF-8.

    Args:
        path: the file.
        what: what the file is for the user (``template``, ``judge config``, ``data file``).
        line: line number of ``data`` in the file (1-based).
        data: the bytes that failed to decode, starting at the beginning of line ``line``.
        exc: the decoding error (its ``start`` is an offset into ``data``).
    """
    before = data[:exc.start]
    line += before.count(b"\n")
    column = exc.start - (before.rfind(b"\n") + 1) + 1
    bad = data[exc.start:exc.start + 1].hex()
    return (f"prb: {what} {path} is not UTF-8 text (line {line}, byte {column}: 0x{bad}); "
            "save it with UTF-8 encoding")


def read_text(path: Path, what: str, error: type[PRBError] = PRBError) -> str:
    """The text of a UTF-8 file.

    Args:
        path: the file.
        what: what the file is for the user, for the message (``template``, ``judge config``).
        error: the :class:`PRBError` subclass raised when the bytes are not UTF-8.
    """
    try:
        data = path.read_bytes().removeprefix(_BOM)
    except OSError as exc:
        raise error(f"prb: cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(not_utf8(path, what, 1, data, exc)) from None


def utf8_lines(lines: Iterable[bytes], path: Path, what: str, error: type[Exception] = PRBError) -> Iterator[str]:
    """Decode the lines of a file opened in binary mode, one at a time (large files stream).

    Args:
        lines: the file's lines as bytes (a file object opened with ``"rb"``).
        path: the file, for the message.
        what: what the file is for the user (``data file``).
        error: the :class:`PRBError` subclass raised on bytes that are not UTF-8.
    """
    for number, raw in enumerate(lines, start=1):
        if number == 1:
            raw = raw.removeprefix(_BOM)
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(not_utf8(path, what, number, raw, exc)) from None


def too_deep(where: str) -> str:
    """The end of a one-line message for JSON or YAML nested deeper than Python can parse.

    Such a file (``[[[[...`` thousands deep) makes the parser raise ``RecursionError``.

    Args:
        where: the file, and the place in it if known (``data.jsonl line 3``).
    """
    return (f"{where} is nested too deeply to read (lists or mappings inside each other thousands "
            "of levels deep); fix or remove it")


def unreadable_number(exc: ValueError) -> str:
    """The middle of a one-line message for JSON that ``json.loads`` refused with a plain
    ValueError: an integer thousands of digits long (beyond Python's int-string limit)."""
    detail = str(exc).split(";")[0]
    return f"holds a number too long to read ({detail})"


def json_lines(path: Path, what: str, advice: str, error: type[Exception] = PRBError,
               prefix: str = "prb: ", max_line: int | None = None) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of a JSON Lines file, parsed, with its line number (streamed).

    Every way such a file can be unreadable is one line naming the file and the line
    (see :func:`json_lines_at`, whose arguments these are).
    """
    for number, _, value in json_lines_at(path, what, advice, error, prefix, max_line):
        yield number, value


def bounded_lines(handle: Any, path: Path, what: str, max_line: int | None,
                  error: type[Exception] = PRBError, prefix: str = "prb: ") -> Iterator[bytes]:
    """The lines of a file opened in binary mode, none read past ``max_line`` bytes: a file of
    gigabytes without a line break is refused in one line instead of being read whole.

    Args:
        handle: the open file.
        path: the file, for the message.
        what: what the file is for the user.
        max_line: the longest line accepted, in bytes (None: no bound).
        error: the exception class raised.
        prefix: starts the message.
    """
    number = 0
    while True:
        raw = handle.readline(-1 if max_line is None else max_line + 1)
        if not raw:
            return
        number += 1
        if max_line is not None and len(raw) > max_line:
            raise error(_too_long(prefix, what, path, number, max_line))
        yield raw


def _too_long(prefix: str, what: str, path: Path, number: int, max_line: int) -> str:
    return (f"{prefix}{what} {path} line {number} is longer than {max_line // 2**20} MiB (no line break "
            "there): not a file of this kind, or a broken one; check that it is the right file")


def json_lines_at(path: Path, what: str, advice: str, error: type[Exception] = PRBError,
                  prefix: str = "prb: ", max_line: int | None = None) -> Iterator[tuple[int, int, Any]]:
    """Each non-blank line of a JSON Lines file, parsed, with its line number and the byte
    offset where the line starts (streamed; a reader can seek back to a row later).

    Every way such a file can be unreadable (missing, not UTF-8, a line that is not JSON or
    is nested thousands of levels deep) is one line naming the file and the line.

    Args:
        path: the file.
        what: what the file is for the user (``data file``, ``samples file``).
        advice: what to do about a line that is not JSON (``fix or remove the line``).
        error: the exception class raised (a :class:`PRBError` subclass, or a caller's own).
        prefix: starts every message (the command, or ``skipped <run>: ``).
        max_line: the longest line read, in bytes (None: no bound; see :func:`bounded_lines`).
    """
    try:
        # A large buffer: rows of data files run to kilobytes (a PRISM conversation about 12 KB), which the
        # default 8 KiB buffer reads in pieces and joins.
        handle = path.open("rb", buffering=2**20)
    except OSError as exc:
        raise error(f"{prefix}cannot read {what} {path}: {exc.strerror or exc}") from None
    # bounded_lines and utf8_lines in one loop: PRISM's metadata.jsonl has a row per text (106,794 at release
    # size), where each generator in between cost a tenth of reading the file.
    readline = handle.readline
    size = -1 if max_line is None else max_line + 1
    number = 0
    position = 0
    with handle:
        while True:
            raw = readline(size)
            if not raw:
                return
            number += 1
            if max_line is not None and len(raw) > max_line:
                raise error(_too_long(prefix, what, path, number, max_line))
            start = position
            position += len(raw)
            if number == 1:
                raw = raw.removeprefix(_BOM)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(not_utf8(path, what, number, raw, exc)) from None
            if not line.strip():
                continue
            try:
                # Without its line break, so a column in the message is a column of this line.
                value = _json(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                raise error(f"{prefix}{path} line {number}, column {exc.colno}: not valid JSON ({exc.msg}); "
                            f"{advice}") from None
            except RecursionError:
                raise error(f"{prefix}{too_deep(f'{path} line {number}')}") from None
            except ValueError as exc:  # a number of thousands of digits: Python refuses to convert it
                raise error(f"{prefix}{path} line {number}: {unreadable_number(exc)}; {advice}") from None
            if "\\u" in line and _SURROGATE_ESCAPE.search(line):
                half = lone_surrogate(value)
                if half is not None:
                    raise error(f"{prefix}{path} line {number}: a text holds {half}, half of a UTF-16 surrogate "
                                f"pair standing alone (no character); {advice}")
            yield number, start, value

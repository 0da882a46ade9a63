"""The elements of a file holding one JSON array, parsed one at a time.

``json.loads`` on such a file holds the file's whole text and every parsed element at
once; here the text is read in chunks and each element is handed out as soon as it is
parsed (``json.JSONDecoder.raw_decode``), so a caller that lets an element go before asking
for the next holds one element and a chunk of text. The standard library's own scanner
parses every element, so what is accepted is exactly what ``json.loads`` accepts.

Only well-formed arrays are streamed: anything else (another top-level value, bad JSON,
bytes that are not UTF-8) raises :class:`NotAnArray`, after which a caller parses the
file whole to name the problem as it always has (the error path may hold the file).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Characters read at a time (a buffer grows past this only to hold one element).
CHUNK = 1 << 20
_SPACE = " \t\n\r"
#: What may follow an element; a tuple, so that "" (the window's end) is not in it.
_AFTER = tuple(_SPACE + ",]")


class NotAnArray(Exception):
    """The file is not a well-formed JSON array (or not UTF-8); parse it whole for the reason."""


class _Text:
    """A window on a text file that is read forward and let go behind the reader."""

    def __init__(self, handle: Any, chunk: int) -> None:
        self.handle, self.chunk = handle, chunk
        self.text, self.at, self.ended = "", 0, False

    def more(self) -> bool:
        """Read further (at least as much as is held, so an element of any size costs linear time)."""
        if self.ended:
            return False
        try:
            piece = self.handle.read(max(self.chunk, len(self.text) - self.at))
        except UnicodeDecodeError:
            raise NotAnArray from None
        if not piece:
            self.ended = True
            return False
        self.text = self.text[self.at:] + piece  # drops what was consumed
        self.at = 0
        return True

    def next_char(self) -> str:
        """The next character that is not JSON whitespace, not consumed ("" at the end)."""
        while True:
            while self.at < len(self.text) and self.text[self.at] in _SPACE:
                self.at += 1
            if self.at < len(self.text) or not self.more():
                return self.text[self.at:self.at + 1]


def array_items(path: Path, chunk: int = CHUNK) -> Iterator[Any]:
    """Each element of the JSON array in ``path``, in order, parsed as it is reached.

    A UTF-8 byte-order mark is accepted, as :func:`prb_tasks.common.textfiles.read_text` does.

    Args:
        path: a UTF-8 file holding one JSON array.
        chunk: characters read at a time.

    Raises:
        NotAnArray: the file is not a well-formed JSON array of UTF-8 text; raised when the
            reading reaches the problem, so elements before it may have been handed out.
        OSError: the file cannot be opened or read.
    """
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8-sig") as handle:
        text = _Text(handle, chunk)
        if text.next_char() != "[":
            raise NotAnArray
        text.at += 1
        if text.next_char() == "]":
            text.at += 1
        else:
            while True:
                yield _element(decoder, text)
                separator = text.next_char()
                text.at += 1
                if separator == "]":
                    break
                if separator != ",":
                    raise NotAnArray
        if text.next_char() != "":
            raise NotAnArray  # more after the array


def _element(decoder: json.JSONDecoder, text: _Text) -> Any:
    """Parse the element starting at the window's next non-space character, reading on as needed."""
    text.next_char()
    while True:
        try:
            value, end = decoder.raw_decode(text.text, text.at)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            if text.more():
                continue  # perhaps only cut off by the chunk's end
            raise NotAnArray from None
        # A number cut by the window's edge parses as a shorter one ("-6." as -6): an element
        # counts as whole only where a separator follows it.
        if text.text[end:end + 1] in _AFTER or not text.more():
            text.at = end
            return value

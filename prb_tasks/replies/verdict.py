"""Read a judge's verdict (A or B) out of its completion.

Rules (docs/tasks.md's verdict list, under Metrics, says the same for users):

- Reasoning is removed first: everything up to the last ``</think>`` and everything from
  an unclosed ``<think>`` on (case-insensitive).
- Only the last :data:`TAIL_CHARS` characters of what remains can hold the verdict. A
  judge states its verdict at the end; the bound keeps the work per completion small
  whatever a looping model produces, and every scan below is linear in its input.
- Statements: a keyword (``Result``, ``Answer``, ``Final verdict``, ``Choice``, ``Winner``,
  ...) with ``:``, ``=`` or ``-`` and a letter (``Result: A``, ``**Result:** B``,
  ``Final verdict: Response A``); ``[[A]]``; a JSON object whose ``choice``/``result``/...
  value is the letter; or a reply that is only the letter. The **last** statement wins.
- Case: a capital ``A``/``B`` counts when no letter or digit follows it. A lower-case
  ``a``/``b`` counts only where it cannot be the English article: alone up to the end of
  its line after a keyword (``Result: b``), as the whole reply, as a whole JSON value, or
  inside ``[[ ]]``. So ``Result: a tie`` is no verdict.
- Ambiguous statements are not credited: ``Result: A or B``, ``A/B``, ``A and B``, ``A, B``,
  ``Both``, ``Neither``, ``tie`` (and a JSON value such as ``"A or B"``). When the last
  statement is ambiguous the completion is unparsed, even if an earlier one named a letter.
- An empty or unreadable completion is its own outcome, never a letter.

The original script's lenient reading, for the ``*_official`` metrics, is
:mod:`prb_tasks.scoring.official`.

Backends signal a judgment that produced no completion with a marker string
(:data:`ERROR_MARK`, :data:`SKIPPED_MARK`) so the outcome survives lm-eval's
string-only interface.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["verdict", "unparsed", "error", "skipped"]

ERROR_MARK = "[prb:error]"
SKIPPED_MARK = "[prb:skipped]"

# Characters of the completion (after reasoning is removed) that may hold the verdict:
# about 5,000 tokens, more than any judge writes after stating its verdict.
TAIL_CHARS = 20_000
# Longest reply read as a bare letter ("B", "**Response A**.").
_BARE_CHARS = 64
_AMBIGUOUS = "?"

_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)

# Every repetition below is bounded, so trying a pattern at one position costs a constant
# and a scan is linear in the text (unbounded runs such as ``\s*\s*`` backtrack
# quadratically on long whitespace).
_KEYWORDS = (
    r"(?:final\s{1,8})?(?:result|answer|verdict|choice|decision|winner|preferred(?:\s{1,8}response)?"
    r"|better\s{1,8}response|preference)"
)
_SEPARATOR = r"\s{0,8}[*_`]{0,4}\s{0,8}[:=\-]"
_KEY = re.compile(r"(?<![A-Za-z])" + _KEYWORDS + _SEPARATOR, re.IGNORECASE)
_LEAD = r"[\s*_`'\"\[\](){}:=\-]{0,24}"  # markdown, quotes and brackets before a letter
_NAMED = r"(?:(?:response|answer|output|assistant|option|candidate)\s{0,4})?"
_SAME_LINE = r"[ \t*_`'\")\]]{0,8}"
_AMBIGUOUS_WORD = (
    r"(?:(?:a|an|it[ \t]{1,4}is|it's)[ \t]{1,4})?"
    r"(?:both|neither|tie[ds]?|draw|equal(?:ly)?|even|none|either|same|undecided|unclear"
    r"|no[ \t]{1,4}preference|cannot|can't)(?![A-Za-z])"
)
# "A or B", "A/B", "A, B", "A and Response B", "A or Result: B" (an echoed instruction).
_OTHER_LETTER = (
    _SAME_LINE + r"(?:(?:or|and|nor|vs|versus)(?![A-Za-z])\.?|[/,&+|])[ \t*_`'\"\[(]{0,8}"
    r"(?:" + _KEYWORDS + _SEPARATOR + r")?" + _LEAD + _NAMED + r"[AaBb](?![A-Za-z0-9])"
)
_ALONE = r"[ \t*_`'\").\]!]{0,16}(?=\n|\r|\Z)"
_READING = re.compile(
    _LEAD + r"(?:(?P<ambiguous>" + _AMBIGUOUS_WORD + r")|" + _NAMED
    + r"(?P<letter>[AaBb])\)?(?![A-Za-z0-9])(?P<other>" + _OTHER_LETTER + r")?(?P<alone>" + _ALONE + r")?)",
    re.IGNORECASE,
)
_CLOSING = re.compile(r"[\s.*_`'\")\]!]*")
_DOUBLE_BRACKET = re.compile(r"\[\[\s{0,4}([AaBb])\s{0,4}\]\]")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_JSON_KEYS = ("result", "answer", "verdict", "choice", "winner", "preferred", "preference", "better")


@dataclass(frozen=True)
class Verdict:
    """A parsed judgment.

    Attributes:
        outcome: ``verdict`` when a letter was found, else why not.
        letter: ``"A"`` or ``"B"`` when ``outcome == "verdict"``, else None.
    """

    outcome: Outcome
    letter: str | None = None


def strip_reasoning(text: str) -> str:
    """The completion without hidden reasoning: after the last ``</think>``, before an unclosed ``<think>``.

    Args:
        text: the judge's completion.
    """
    last_close = None
    for last_close in _THINK_CLOSE.finditer(text):
        pass
    if last_close is not None:
        text = text[last_close.end():]
    # No closing tag is left, so an opening one is never closed: the model never finished
    # reasoning and nothing after it counts.
    opened = _THINK_OPEN.search(text)
    return text[:opened.start()] if opened else text


def _reading(match: re.Match[str] | None) -> str | None:
    """The letter ("A" or "B"), :data:`_AMBIGUOUS`, or None (no statement) of a :data:`_READING` match."""
    if match is None:
        return None
    if match["ambiguous"] or match["other"]:
        return _AMBIGUOUS
    letter = match["letter"]
    if letter.isupper() or match["alone"] is not None:
        return letter.upper()
    return None


def _whole_reading(text: str) -> str | None:
    """The reading of a text that must be nothing but the verdict (a bare reply, a JSON value)."""
    match = _READING.match(text)
    reading = _reading(match)
    if reading in ("A", "B") and match is not None:
        closing = _CLOSING.match(text, match.end())
        assert closing is not None  # _CLOSING matches the empty string too
        if closing.end() != len(text):
            return None
    return reading


def _json_reading(blob: str) -> str | None:
    try:
        value = json.loads(blob)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for key, raw in value.items():
        if isinstance(key, str) and key.strip().lower() in _JSON_KEYS and isinstance(raw, str):
            reading = _whole_reading(raw.strip())
            if reading:
                return reading
    return None


def _statements(text: str) -> list[tuple[int, str]]:
    """(position, reading) of every verdict statement in ``text``."""
    found: list[tuple[int, str]] = []
    read_until = 0
    for key in _KEY.finditer(text):
        if key.start() < read_until:
            continue  # inside the previous statement ("Result: A or Result: B")
        match = _READING.match(text, key.end())
        reading = _reading(match)
        if reading and match is not None:
            found.append((key.start(), reading))
            read_until = match.end()
    found.extend((m.start(), m.group(1).upper()) for m in _DOUBLE_BRACKET.finditer(text))
    for m in _JSON_OBJECT.finditer(text):
        reading = _json_reading(m.group(0))
        if reading:
            # An object is read as a whole: a keyword inside one of its strings comes before it.
            found.append((m.end() - 1, reading))
    return found


def marker_outcome(completion: object) -> Outcome | None:
    """The outcome of a reply that has nothing to read; None for text a parser should read.

    Nothing to read: not text, or a backend's error or skip marker.
    """
    if not isinstance(completion, str):
        return "unparsed"
    if completion.startswith(ERROR_MARK):
        return "error"
    if completion.startswith(SKIPPED_MARK):
        return "skipped"
    return None


def parse_verdict(completion: object) -> Verdict:
    """Parse a completion; never raises, and takes time linear in its length.

    Args:
        completion: the judge's text (anything else is treated as unparsed).
    """
    if not isinstance(completion, str):
        return Verdict("unparsed")
    if completion.startswith(ERROR_MARK):
        return Verdict("error")
    if completion.startswith(SKIPPED_MARK):
        return Verdict("skipped")
    text = strip_reasoning(completion).strip()[-TAIL_CHARS:]
    if not text:
        return Verdict("unparsed")
    found = _statements(text)
    reading = max(found)[1] if found else None
    if reading is None and len(text) <= _BARE_CHARS:
        reading = _whole_reading(text)
    if reading in ("A", "B"):
        return Verdict("verdict", reading)
    return Verdict("unparsed")


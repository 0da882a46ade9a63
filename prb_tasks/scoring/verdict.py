"""Read a judge's verdict (A or B) out of its completion.

We take the *last* verdict in the text, after removing any reasoning inside
``<think>...</think>`` (and anything before a lone closing ``</think>``). An empty or
unparseable completion is its own outcome, never a letter. (The original script's
lenient reading, for the ``*_official`` metrics, is :mod:`prb_tasks.scoring.official`.)

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

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_THINK_OPEN_TAIL = re.compile(r"<think>.*\Z", re.IGNORECASE | re.DOTALL)

_LEAD = r"[\s*_`'\"\[\](){}:=\-]*"  # markdown, quotes and brackets around a letter
_NAMED = r"(?:(?:response|answer|output|assistant|option|candidate)\s*)?"
_KEYWORD = re.compile(
    r"(?:final\s+)?(?:result|answer|verdict|choice|decision|winner|preferred(?:\s+response)?"
    r"|better\s+response|preference)"
    r"\s*[*_`]*\s*[:=\-]\s*" + _LEAD + _NAMED + r"\(?((?-i:[AB]))\)?(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_DOUBLE_BRACKET = re.compile(r"\[\[\s*([AaBb])\s*\]\]")
_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_JSON_KEYS = ("result", "answer", "verdict", "choice", "winner", "preferred", "preference", "better")
_BARE = re.compile(r"^" + _LEAD + _NAMED + r"([AB])" + r"[\s.*_`'\")\]]*$", re.IGNORECASE)


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
    """The completion without hidden reasoning."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    text = _THINK_BLOCK.sub(" ", text)
    # An unclosed <think> means the model never finished reasoning: nothing after it counts.
    return _THINK_OPEN_TAIL.sub(" ", text)


def _letter_from_json(blob: str) -> str | None:
    try:
        value = json.loads(blob)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for key, raw in value.items():
        if not isinstance(key, str) or key.strip().lower() not in _JSON_KEYS:
            continue
        if isinstance(raw, str):
            match = _BARE.match(raw.strip())
            if match:
                return match.group(1).upper()
    return None


def parse_verdict(completion: object) -> Verdict:
    """Parse a completion; never raises.

    Args:
        completion: the judge's text (anything else is treated as unparsed).
    """
    if not isinstance(completion, str):
        return Verdict("unparsed")
    if completion.startswith(ERROR_MARK):
        return Verdict("error")
    if completion.startswith(SKIPPED_MARK):
        return Verdict("skipped")
    text = strip_reasoning(completion).strip()
    if not text:
        return Verdict("unparsed")
    found: list[tuple[int, str]] = []
    for pattern in (_KEYWORD, _DOUBLE_BRACKET):
        found.extend((m.start(), m.group(1).upper()) for m in pattern.finditer(text))
    for m in _JSON_OBJECT.finditer(text):
        letter = _letter_from_json(m.group(0))
        if letter:
            found.append((m.start(), letter))
    if found:
        return Verdict("verdict", max(found)[1])
    bare = _BARE.match(text)
    if bare:
        return Verdict("verdict", bare.group(1).upper())
    return Verdict("unparsed")


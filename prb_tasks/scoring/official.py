"""The original evaluation script's reading of a judge's verdict, re-implemented.

It feeds only the ``*_official`` metrics of the official task, so that numbers can be
set next to the paper's. Our own reading (:mod:`prb_tasks.replies.verdict`) stays the
default everywhere else. The rules, restated from the authors' ``evaluation/pairwise.py``:

1. strip the completion, keep what follows the last ``</think>`` (case-sensitive) and
   strip that;
2. delete every ``"`` and ``*`` (single quotes, curly quotes and brackets stay), strip;
3. lower-case it; without ``result:`` in it, the reading fails;
4. take the text between the first ``result:`` and the second one (or the end), strip
   it: a leading ``a`` reads A, a leading ``b`` reads B, anything else fails;
5. a failed reading counts as "A".

So ``Result: B`` and ``result: b`` read B, while ``Result: Response B``, ``Result: [B]``
and ``Result: 'B'`` fail and read A. "Strip" is Python's ``str.strip()``: every
Unicode whitespace character (NBSP, ideographic space, ...), nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK

_THINK_END = "</think>"
_KEY = "result:"
_DROPPED = str.maketrans("", "", '"*')


@dataclass(frozen=True)
class OfficialReading:
    """What the original script makes of one completion.

    Attributes:
        letter: ``"A"`` or ``"B"``; always a letter, as in the original script.
        parse_failed: True when no verdict was read and the letter is the default "A".
    """

    letter: Literal["A", "B"]
    parse_failed: bool


_FAILED = OfficialReading("A", True)


def official_reading(text: str) -> OfficialReading:
    """Read ``text`` exactly as the original script does.

    Args:
        text: the judge's completion.
    """
    body = text.strip()
    cut = body.rfind(_THINK_END)
    if cut >= 0:
        body = body[cut + len(_THINK_END):]
    lowered = body.strip().translate(_DROPPED).strip().lower()
    start = lowered.find(_KEY)
    if start < 0:
        return _FAILED
    rest = lowered[start + len(_KEY):]
    end = rest.find(_KEY)
    segment = (rest if end < 0 else rest[:end]).strip()
    if segment.startswith("a"):
        return OfficialReading("A", False)
    if segment.startswith("b"):
        return OfficialReading("B", False)
    return _FAILED


def official_judgment(completion: object) -> OfficialReading | None:
    """The original reading of one of our judgments, or None if nothing was generated.

    A request that failed for good or was skipped for the budget (our backends mark
    them, see :mod:`prb_tasks.replies.verdict`) has no completion the original script
    could have read; the ``*_official`` metrics count it wrong and never as a letter.

    Args:
        completion: what the backend returned (a non-string reads as an empty text).
    """
    if not isinstance(completion, str):
        return official_reading("")
    if completion.startswith((ERROR_MARK, SKIPPED_MARK)):
        return None
    return official_reading(completion)

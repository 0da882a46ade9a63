"""Read a 1-10 score out of a pointwise judge's completion (Best-of-N with judges).

The *last* score in the text wins, after hidden reasoning is removed exactly as for
verdicts. Accepted: ``Score: 7``, ``**Rating:** 8/10``, ``Score = 6.5``, ``9/10``, or a
reply that is only the number. Anything outside 1-10 is unparsed, never clipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK, Outcome, strip_reasoning

LOW, HIGH = 1.0, 10.0

_NUMBER = r"(\d{1,2}(?:\.\d+)?)"
_KEYED = re.compile(
    r"(?:final\s+)?(?:score|rating)\s*[*_`]*\s*[:=]\s*[*_`\[(\s]*" + _NUMBER + r"(?:\s*/\s*10)?(?![\d.])",
    re.IGNORECASE,
)
_FRACTION = re.compile(r"(?<![\d.])" + _NUMBER + r"\s*/\s*10(?![\d])")
_BARE = re.compile(r"^[\s*_`'\"]*" + _NUMBER + r"[\s.*_`'\"]*$")


@dataclass(frozen=True)
class ScoreReading:
    """A parsed pointwise judgment.

    Attributes:
        outcome: ``verdict`` when a score was found, else why not.
        value: the score (1-10) when found.
    """

    outcome: Outcome
    value: Optional[float] = None


def parse_score(completion: object) -> ScoreReading:
    """Parse a completion; never raises.

    Args:
        completion: the judge's text (anything else is unparsed).
    """
    if not isinstance(completion, str):
        return ScoreReading("unparsed")
    if completion.startswith(ERROR_MARK):
        return ScoreReading("error")
    if completion.startswith(SKIPPED_MARK):
        return ScoreReading("skipped")
    text = strip_reasoning(completion).strip()
    found = [(m.start(), m.group(1)) for pattern in (_KEYED, _FRACTION) for m in pattern.finditer(text)]
    if not found:
        bare = _BARE.match(text)
        found = [(0, bare.group(1))] if bare else []
    if not found:
        return ScoreReading("unparsed")
    value = float(max(found)[1])
    if not LOW <= value <= HIGH:
        return ScoreReading("unparsed")
    return ScoreReading("verdict", value)

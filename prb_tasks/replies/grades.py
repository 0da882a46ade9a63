"""A Best-of-N grader's rubric grade (``personalized_rb_bon_grade``): ``Aspect i: g`` lines, g in 0-2.

prb's reading is :func:`parse_grade`; documents of the ``official`` preset are read by the
authors' rule instead (:mod:`prb_tasks.replies.bon_official`); :func:`grade_value` picks the
rule a document names. What the grades become (best-of-k metrics): :mod:`prb_tasks.scoring.bestofk`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from prb_tasks.replies import bon_official as official
from prb_tasks.replies.verdict import Outcome, marker_outcome, strip_reasoning

GRADE_LEVELS = (0, 1, 2)


@dataclass(frozen=True)
class GradeReading:
    """A parsed rubric grade.

    Attributes:
        outcome: ``verdict`` when every aspect got a readable 0/1/2, else why not.
        value: the mean of the aspect grades (0-2) when readable.
        per_aspect: the grade of each aspect, in rubric order.
    """

    outcome: Outcome
    value: Optional[float] = None
    per_aspect: tuple[int, ...] = ()


_ASPECT_LINE = re.compile(r"aspect\s*(\d+)\s*[*_`]*\s*[:=\-]\s*[*_`\[(\s]*([0-2])(?![\d.])", re.IGNORECASE)


def parse_grade(completion: object, aspects: int) -> GradeReading:
    """Read ``Aspect i: g`` lines (g in 0, 1, 2) for aspects 1..``aspects``; never raises.

    The last line for an aspect wins (graders restate their final answer). A missing
    aspect, or a grade outside 0-2, makes the whole grade unreadable.

    Args:
        completion: the grader's text (anything else is unreadable).
        aspects: how many rubric aspects the row has.
    """
    marked = marker_outcome(completion)
    if marked is not None or not isinstance(completion, str):
        return GradeReading(marked or "unparsed")
    found: dict[int, int] = {}
    for match in _ASPECT_LINE.finditer(strip_reasoning(completion)):
        found[int(match.group(1))] = int(match.group(2))
    wanted = range(1, aspects + 1)
    if aspects < 1 or any(i not in found for i in wanted):
        return GradeReading("unparsed")
    grades = tuple(found[i] for i in wanted)
    return GradeReading("verdict", sum(grades) / aspects, grades)


def grade_value(doc: dict[str, Any], completion: object) -> Optional[float]:
    """One candidate's gold grade by the rule its document names (None: no grade).

    Args:
        doc: a ``personalized_rb_bon_grade`` document (``aspects``: how many; ``rule``:
            ``official`` for the authors' parsing, else prb's).
        completion: the grader's reply.
    """
    if doc.get("rule") == official.RULE:
        return official.official_grade(completion)
    return parse_grade(completion, int(doc.get("aspects", 0))).value

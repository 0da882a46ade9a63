r"""Read RM-Bench's five-way pairwise verdict, ``\boxed{A>>B}`` ... ``\boxed{B>>A}``, out of a reply.

The verdict forms are the five the RM-Bench authors list in their README's comparison
prompt (THU-KEG/RM-Bench @73c52d7, the prompt they used for DeepSeek-R1): ``A>>B``
(A significantly better), ``A>B`` (slightly), ``A=B`` (tie), ``B>A``, ``B>>A``, each
inside ``\boxed{...}``. They publish no code that reads them; these rules are prb's:

- hidden reasoning is removed first, as for every prb verdict
  (:func:`prb_tasks.replies.verdict.strip_reasoning`);
- the **last** ``\boxed{...}`` of the reply is the verdict. One or two backslashes and
  single or doubled braces are accepted (the README prints the prompt as the escaped
  Python string ``\\boxed{{A>>B}}``, which a model may copy as written), and spaces
  inside (``\boxed{ A > B }``); the letters may be lower case;
- its content must be one of the five forms; anything else in the last box
  (``\boxed{A}``, ``\boxed{A or B}``, ``\boxed{B<A}``) makes the reply unparsed,
  even when an earlier box held a verdict (the judge's last word was not one);
- a reply without a box, an empty reply and a backend's error or skip marker are never
  a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Optional

from prb_tasks.replies.verdict import TAIL_CHARS, Outcome, marker_outcome, strip_reasoning

#: The five verdicts of the authors' prompt -> (the preferred position, None for a tie; strength 0-2).
FORMS: dict[str, tuple[Optional[str], int]] = {
    "A>>B": ("A", 2),
    "A>B": ("A", 1),
    "A=B": (None, 0),
    "B>A": ("B", 1),
    "B>>A": ("B", 2),
}

# Bounded repetitions: a scan is linear in the text.
_BOX = re.compile(r"\\{1,2}boxed[ \t]{0,4}\{\{?([^{}\n]{0,40})\}\}?")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class BoxedVerdict:
    """One reply's reading.

    Attributes:
        outcome: ``verdict`` when the last box holds one of the five forms, else why not.
        form: that form (``A>B``), when read.
    """

    outcome: Outcome
    form: Optional[str] = None

    @property
    def preferred(self) -> Optional[Literal["A", "B"]]:
        """The position the verdict prefers; None for a tie or no verdict."""
        return FORMS[self.form][0] if self.form else None  # type: ignore[return-value]

    @property
    def tie(self) -> bool:
        """Whether the verdict is ``A=B``."""
        return self.form == "A=B"


def parse_boxed(reply: object) -> BoxedVerdict:
    """The verdict of a reply; never raises, linear in the reply's length.

    Args:
        reply: the judge's text (anything else, and prb-judge's error / skip markers, are not verdicts).
    """
    marked = marker_outcome(reply)
    if marked is not None:
        return BoxedVerdict(marked)
    assert isinstance(reply, str)
    text = strip_reasoning(reply)[-TAIL_CHARS:]
    last = None
    for last in _BOX.finditer(text):
        pass
    if last is None:
        return BoxedVerdict("unparsed")
    form = _SPACE.sub("", last.group(1)).upper()
    return BoxedVerdict("verdict", form) if form in FORMS else BoxedVerdict("unparsed")

"""A RewardBench 2 judge's 1-10 rating, read as allenai's ``scripts/run_generative_v2.py`` reads it.

allenai/reward-bench at 05a9005; the rules and the scores built on them:
:mod:`prb_tasks.scoring.rewardbench2_ratings`.

The rating is an integer 1-10 standing alone as a word at the very end of the reply, once
whitespace at both ends is removed; anything else is unrated (their ``-1``).
"""

from __future__ import annotations

import re

from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK

#: Their value for a reply without a rating.
UNRATED = -1
_TRAILING_RATING = re.compile(r"\b([1-9]|10)\b\s*$")


def parse_rating(reply: object) -> int:
    """The 1-10 rating at the end of a judge's reply, or :data:`UNRATED`.

    Args:
        reply: the judge's text; prb-judge's error and skipped markers and non-text are unrated.
    """
    if not isinstance(reply, str) or not reply or reply.startswith((ERROR_MARK, SKIPPED_MARK)):
        return UNRATED
    found = _TRAILING_RATING.search(reply.strip())
    return int(found.group(1)) if found else UNRATED

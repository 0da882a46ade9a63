"""Reading a model's reply: verdicts, boxed verdicts, pointwise scores, ratings, grades, plans.

Each parser takes a judge's or grader's text and says what it read, or why it read nothing
(the error and skip markers a failed or skipped request leaves are here too). They sit on a
floor of their own, above ``common`` and ``text`` and below ``data``, ``documents`` and
``judge``, which read replies while loading files, building documents and running judges;
``scoring`` turns what they read into metrics. Named for what they take in, a reply.
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.replies.boxed_verdict import parse_boxed
    from prb_tasks.replies.grades import parse_grade
    from prb_tasks.replies.order import official_positions
    from prb_tasks.replies.plans import parse_plan
    from prb_tasks.replies.pointwise import parse_score
    from prb_tasks.replies.ratings import parse_rating
    from prb_tasks.replies.verdict import marker_outcome, parse_verdict, strip_reasoning

__all__ = [
    "marker_outcome",
    "official_positions",
    "parse_boxed",
    "parse_grade",
    "parse_plan",
    "parse_rating",
    "parse_score",
    "parse_verdict",
    "strip_reasoning",
]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.replies.boxed_verdict": ("parse_boxed",),
    "prb_tasks.replies.grades": ("parse_grade",),
    "prb_tasks.replies.order": ("official_positions",),
    "prb_tasks.replies.plans": ("parse_plan",),
    "prb_tasks.replies.pointwise": ("parse_score",),
    "prb_tasks.replies.ratings": ("parse_rating",),
    "prb_tasks.replies.verdict": ("marker_outcome", "parse_verdict", "strip_reasoning"),
})

"""What a judge's reply must end with, per kind of document, and how ``reask`` asks for it.

A task reads one thing out of each reply: a pairwise letter (``Result: A``), a 1-10
rating, a ``Score: N``, RM-Bench's boxed verdict. ``reask=1`` sends one follow-up turn
when the first reply lacks it; the follow-up must ask for *that* form, in words the
task's own parser reads, or it only adds a second unreadable reply. Documents without
a verdict (answers a policy writes, plans, rubric grades) are never re-asked.

The form is chosen by the document's ``variant`` (the document builders set it), so
one table here says, for every task, which parser decides whether to re-ask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from prb_tasks.judge.options import DEFAULT_REASK_PROMPT

#: The form of pairwise verdicts, every judge task's default.
PAIRWISE = "pairwise"


@dataclass(frozen=True)
class ReplyForm:
    """One kind of reply a task reads.

    Attributes:
        name: the form's name (``pairwise``, ``rating``, ``score``, ``boxed``).
        reads: whether a reply carries what the task reads (the task's own parser).
        reask_prompt: the follow-up user turn asking for that, in a form ``reads`` accepts.
    """

    name: str
    reads: Callable[[str], bool]
    reask_prompt: str


def _pairwise(text: str) -> bool:
    from prb_tasks.replies.verdict import parse_verdict

    return parse_verdict(text).outcome != "unparsed"


def _trailing_rating(text: str) -> bool:
    from prb_tasks.replies.ratings import UNRATED, parse_rating

    return parse_rating(text) != UNRATED


def _score(text: str) -> bool:
    from prb_tasks.replies.pointwise import parse_score

    return parse_score(text).outcome != "unparsed"


def _boxed(text: str) -> bool:
    from prb_tasks.replies.boxed_verdict import parse_boxed

    return parse_boxed(text).outcome != "unparsed"


FORMS: dict[str, ReplyForm] = {
    # The default follow-up; ``reask_prompt`` (a judge setting) replaces it.
    PAIRWISE: ReplyForm(PAIRWISE, _pairwise, DEFAULT_REASK_PROMPT),
    # RewardBench 2's ratings path: read only as a whole number ending the reply.
    "rating": ReplyForm("rating", _trailing_rating,
                        "Your reply did not end with a rating. Reply with the rating only: one whole number "
                        "from 1 to 10, with nothing before or after it."),
    # Best-of-N judges (PersonalLLM, Personalized RewardBench): ``Score: N``.
    "score": ReplyForm("score", _score,
                       "Your reply did not end with a score. Answer with exactly one line: `Score: N`, where N "
                       "is a whole number from 1 to 10."),
    # RM-Bench's five verdicts (replies/boxed_verdict.py).
    "boxed": ReplyForm("boxed", _boxed,
                       "Your reply did not end with a verdict. Answer with exactly one of: \\boxed{A>>B}, "
                       "\\boxed{A>B}, \\boxed{A=B}, \\boxed{B>A}, \\boxed{B>>A}."),
}

#: Document variant -> its reply form; None: the reply is free text (never re-asked, no verdict counted).
FORM_OF_VARIANT: dict[str, Optional[str]] = {
    "rating": "rating",  # rewardbench2_judge
    "bon_judge": "score",  # personalllm_bon_judge, personalized_rb_bon_judge
    "rmbench_pair": "boxed",  # rmbench_judge
    "gen": None,  # personalllm_gen: the model writes an answer
    "plan": None,  # personalized_rb_plan: aspects
    "bon_sample": None,  # candidates a policy writes
    "bon_grade": None,  # rubric grades (`Aspect i: n`), read by their own parser
    "pgenrm": None,  # personal_reward_bench_*_official_pgenrm: JSON scores, read by P-GenRM's rules
}


def form_name(doc: Any) -> Optional[str]:
    """The reply form of an lm-eval document (a dict), :data:`PAIRWISE` by default; None for free text.

    Args:
        doc: the document a request was built from (None or not a dict: pairwise).
    """
    variant = doc.get("variant") if isinstance(doc, dict) else None
    return FORM_OF_VARIANT.get(variant, PAIRWISE) if isinstance(variant, str) else PAIRWISE


def reask_prompt(form: ReplyForm, pairwise_prompt: str) -> str:
    """The follow-up turn of ``form``: the judge's ``reask_prompt`` setting for pairwise verdicts,
    the form's own otherwise (a pairwise follow-up would ask a rater for a letter)."""
    return pairwise_prompt if form.name == PAIRWISE else form.reask_prompt

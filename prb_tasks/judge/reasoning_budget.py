"""Replies whose token budget went to hidden reasoning, counted apart and named.

A reasoning model given too few tokens can spend them all thinking: the server ends the
reply with finish reason ``length`` and there is no verdict, only (perhaps part of) the
reasoning. Such a reply is not a judge failing to decide; it is a budget too small. It
is kept (and cached) with a mark ``<think>[prb:budget-spent-on-reasoning max_tokens=N]</think>``
before it, so the count survives the cache, and it still scores as a parse failure.

With ``reasoning_retry_tokens=M`` such a reply is asked again once with ``max_tokens=M`` (a
request of its own: cached, priced, counted); the reply kept then carries
``<think>[prb:asked-again max_tokens=M after N went to reasoning]</think>``, and the usage
summary written beside the results counts both, so a larger budget is never used silently.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from prb_tasks.judge.client import CallResult
from prb_tasks.judge.reply_forms import FORMS
from prb_tasks.judge.request import ChatRequest

_CUT = re.compile(r"<think>\[prb:budget-spent-on-reasoning max_tokens=(\w+)\]</think>")
_RETRIED = re.compile(r"<think>\[prb:asked-again max_tokens=(\d+) after (\w+) went to reasoning\]</think>")


# prb's own marks (soft verdicts, this module's) are not the model's reasoning.
_OUR_MARKS = re.compile(r"<think>\[prb:[^\]]*\]</think>")


def _reasoned(result: CallResult) -> bool:
    return "<think>" in _OUR_MARKS.sub("", result.text).lower() or bool(result.reasoning_tokens)


def mark_cut(result: CallResult, request: ChatRequest) -> CallResult:
    """``result`` marked as cut off in its reasoning when it is: finish reason ``length``, reasoning,
    and nothing the task reads (unchanged otherwise).

    Args:
        result: the reply.
        request: what it answers (its reply form says what the task reads).
    """
    form = FORMS.get(request.reply_form) if request.reply_form else None
    if result.finish_reason != "length" or form is None or not _reasoned(result) or form.reads(result.text):
        return result
    budget = request.max_tokens if request.max_tokens is not None else "default"
    return replace(result, text=f"<think>[prb:budget-spent-on-reasoning max_tokens={budget}]</think>{result.text}")


def is_cut(text: str) -> bool:
    """Whether a reply is marked as cut off in its reasoning (see :func:`mark_cut`)."""
    return text.startswith("<think>[prb:budget-spent-on-reasoning ")


def retried(text: str, first: int | None, budget: int) -> str:
    """The reply to the larger-budget request, marked with both budgets.

    Args:
        text: the new reply.
        first: the budget the first reply spent on reasoning (None: the provider's default).
        budget: the larger budget it was asked again with.
    """
    return f"<think>[prb:asked-again max_tokens={budget} after {first if first is not None else 'default'} " \
           f"went to reasoning]</think>{text}"


def count(completions: list[str]) -> dict[str, Any]:
    """How many final replies are cut off in reasoning (with no verdict) and how many were asked again.

    Args:
        completions: the run's pairwise replies as returned to lm-eval.
    """
    from prb_tasks.replies.verdict import parse_verdict

    cut, again, budgets, first = 0, 0, set(), set()
    for text in completions:
        match = _RETRIED.match(text)
        body = text[match.end():] if match else text
        if match:
            again += 1
            budgets.add(int(match.group(1)))
        cut_mark = _CUT.match(body)
        if cut_mark and parse_verdict(text).outcome == "unparsed":
            cut += 1
            first.add(cut_mark.group(1))
    return {"cut_in_reasoning": cut, "asked_again": again, "asked_again_max_tokens": sorted(budgets),
            "cut_budgets": sorted(first)}


def reasoning_line(summary: dict[str, Any]) -> str | None:
    """The line under the table naming replies whose budget went to reasoning (None without any).

    Args:
        summary: the judge run's usage summary (its ``reasoning_budget`` entry).
    """
    info = summary.get("reasoning_budget") or {}
    cut, again = int(info.get("cut_in_reasoning") or 0), int(info.get("asked_again") or 0)
    if not cut and not again:
        return None
    budgets = ", ".join(info.get("cut_budgets") or []) or "?"
    parts = []
    if again:
        bigger = ", ".join(str(b) for b in info.get("asked_again_max_tokens") or [])
        parts.append(f"{again} replies that spent their whole token budget on hidden reasoning were asked again "
                     f"with max_tokens={bigger} (reasoning_retry_tokens; the samples say which)")
    if cut:
        advice = ("raise max_tokens or reasoning_retry_tokens" if again
                  else "raise max_tokens, or set reasoning_retry_tokens=N to ask them again with N tokens")
        parts.append(f"{cut} replies spent their whole token budget (max_tokens={budgets}) on hidden reasoning "
                     f"and have no verdict (finish reason `length`; counted as parse failures); {advice}")
    return "prb-judge: " + "; ".join(parts)

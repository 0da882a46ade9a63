"""Soft verdicts on the judge's side: a reply asked for log-probabilities gets its mark.

The runner calls :func:`soft_reply` on every reply to a request that asked for
log-probabilities (``logprobs=`` in model_args); the text it returns is what lm-eval and
the cache receive. A server that ignores the request (no ``logprobs`` in its reply)
would give a run of hard verdicts only, labelled soft: :class:`NoLogprobs` stops it.
"""

from __future__ import annotations

from dataclasses import replace

from prb_tasks.judge.client import CallResult
from prb_tasks.judge.request import ChatRequest
from prb_tasks.replies.soft_verdict import NO_SOFT_MARK, soft_verdict, with_mark


class NoLogprobs(Exception):
    """The server answered a request for log-probabilities without any."""


def soft_reply(result: CallResult, request: ChatRequest) -> CallResult:
    """``result`` with its soft verdict marked in its text (:data:`NO_SOFT_MARK` where it has none).

    Args:
        result: the reply as the transport read it.
        request: the request it answers; nothing changes unless it asked for log-probabilities.

    Raises:
        NoLogprobs: the request asked for them and a non-empty reply carries none.
    """
    if request.top_logprobs is None or result.refused or not result.text.strip():
        return result
    if result.logprobs is None:
        raise NoLogprobs()
    soft = soft_verdict(result.text, result.logprobs)
    if soft is None:
        return replace(result, text=NO_SOFT_MARK + result.text, logprobs=None)
    # The tokens are not kept: the text carries what is read from them.
    return replace(result, text=with_mark(result.text, soft), logprobs=None)


def no_logprobs_line(model: str, api_base: str | None, top: int) -> str:
    """The one line that stops a run whose server returns no log-probabilities.

    Args:
        model: the judge's model id.
        api_base: its server, if any.
        top: the ``top_logprobs`` asked for.
    """
    where = f" at {api_base}" if api_base else ""
    return (f"prb-judge: {model}{where} returned no log-probabilities although logprobs={top} asked for them "
            "(`logprobs`/`top_logprobs` of the OpenAI chat API), so no soft verdict can be read; use a server "
            "that returns them (vLLM, llama.cpp, OpenAI) or run without logprobs")

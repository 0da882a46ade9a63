"""One chat request to a judge, and what identifies its answer in the cache."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

Message = dict[str, str]

# Bump when the meaning of a cached answer changes (e.g. how text is assembled).
CACHE_SCHEMA = 1


@dataclass(frozen=True)
class ChatRequest:
    """A fully resolved request: exactly what is sent, minus transport details.

    Attributes:
        messages: chat turns, each ``{"role": ..., "content": ...}``.
        max_tokens: completion token budget (None: provider default).
        temperature: sampling temperature (None: not sent).
        top_p: nucleus sampling (None: not sent).
        seed: sampling seed (None: not sent).
        stop: stop sequences (empty: not sent).
        response_format: provider response format (None: not sent).
        reasoning_effort: reasoning budget (None: not sent).
        top_logprobs: ask for log-probabilities and this many alternatives per token
            (``logprobs``/``top_logprobs``; None: not asked), for soft verdicts
            (:mod:`prb_tasks.replies.soft_verdict`). Part of the request's identity, so a
            stored answer without them never answers a request for them.
        ask_once: score the first reply as it comes: an empty reply is not asked again
            and no verdict re-ask follows. The official protocol sends each request once
            and scores whatever came back; our own protocols ask again (set by the
            documents, see :data:`prb_tasks.documents.pairs.ASK_ONCE`).
        shared_prefix: characters at the start of the last message that another request
            of the run shares (where a provider prompt-cache breakpoint can go); a
            transport hint only: not part of the request's identity.
        reply_form: what the reply must end with, a name in
            :data:`prb_tasks.judge.reply_forms.FORMS` (None: free text); decides whether
            and how ``reask`` asks again. Not part of the request's identity (the
            follow-up turn it leads to is).
    """

    messages: tuple[Message, ...]
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    response_format: dict[str, Any] | None = None
    reasoning_effort: str | None = None
    top_logprobs: int | None = None
    ask_once: bool = False
    shared_prefix: int = field(default=0, compare=False)
    reply_form: str | None = field(default="pairwise", compare=False)

    def params(self) -> dict[str, Any]:
        """Sampling parameters to send, without the ones left unset."""
        out: dict[str, Any] = {}
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.seed is not None:
            out["seed"] = self.seed
        if self.stop:
            out["stop"] = list(self.stop)
        if self.response_format is not None:
            out["response_format"] = self.response_format
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        if self.top_logprobs is not None:
            out["logprobs"] = True
            out["top_logprobs"] = self.top_logprobs
        return out

    def followup(self, answer: str, prompt: str) -> ChatRequest:
        """The same request continued by our answer and one more user turn."""
        extra = ({"role": "assistant", "content": answer}, {"role": "user", "content": prompt})
        # The shared prefix was measured on the last message, which is no longer last.
        return replace(self, messages=self.messages + extra, shared_prefix=0)

    def estimated_tokens(self) -> int:
        """Rough prompt + completion tokens, for tokens-per-minute pacing (4 chars/token)."""
        chars = sum(len(m.get("content", "")) for m in self.messages)
        return chars // 4 + (self.max_tokens or 512)


def identity(request: ChatRequest, model: str, api_base: str | None) -> str:
    """Canonical JSON of everything that changes the answer (not keys, retries, timeouts)."""
    payload = {
        "schema": CACHE_SCHEMA,
        "model": model,
        "api_base": api_base,
        "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
        "params": request.params(),
    }
    if request.ask_once:
        # An answer stored by a protocol that asks again may be a second reply, which a
        # first-reply protocol must never be given; other keys stay as they were.
        payload["ask_once"] = True
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_digest(request: ChatRequest, model: str, api_base: str | None) -> str:
    """SHA-256 of :func:`identity`: equal for requests that must get equal answers."""
    return hashlib.sha256(identity(request, model, api_base).encode("utf-8")).hexdigest()


def cache_key(digest: str, sample_index: int) -> str:
    """Key of one answer in the cache.

    Args:
        digest: :func:`request_digest` of the request.
        sample_index: how many identical requests came before this one in the run, so
            repeats get their own answers instead of all sharing the first.
    """
    return f"judge:{digest}:{sample_index}"


def answer_profile(request: ChatRequest, model: str, api_base: str | None) -> str:
    """Fingerprint of what shapes the length of an answer apart from the case judged.

    Model, server, the system messages (the judging rules a template renders) and the
    generation settings. Stored answers carry it, so a dry run can estimate output
    tokens from earlier answers of the same judge with the same rules.
    """
    payload = {
        "model": model,
        "api_base": api_base,
        "system": [m["content"] for m in request.messages if m["role"] == "system"],
        "params": request.params(),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

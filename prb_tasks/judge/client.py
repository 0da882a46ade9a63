"""One judge call through litellm, and what a failure means for the run.

Every failure becomes a :class:`CallError` that says whether to retry it (rate limits,
timeouts, server errors, broken connections, garbage replies), to give up on this one
judgment (content filter, prompt too long), or to stop the whole run (bad key, unknown
model, malformed request: every other call would fail the same way).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from prb_tasks.common.redact import redact, register_secret
from prb_tasks.common.retry import parse_retry_after
from prb_tasks.common.urls import join_path
from prb_tasks.judge.request import ChatRequest

_KEYISH = re.compile(r"\b(sk|pk|rk|key|api|tok|ghp|xox[bpa])[-_][A-Za-z0-9_\-]{8,}", re.IGNORECASE)
_BEARER = re.compile(r"(bearer|x-api-key|api[_-]?key)([\s:=\"']+)[^\s,\"']+", re.IGNORECASE)


_LITELLM_PREFIX = re.compile(r"^(?:\s*(?:litellm\.)?[A-Za-z]*(?:Error|Exception|Timeout)(?::| -)\s*)+")


def sanitize(message: object, secrets: tuple[str, ...] = (), limit: int = 200) -> str:
    """A short one-line message with keys removed.

    Args:
        message: exception text (may contain headers or request echoes).
        secrets: exact strings to redact (the key in use), on top of every credential
            variable in the environment (:func:`prb_tasks.common.redact.redact`).
        limit: maximum length.
    """
    text = redact(" ".join(str(message).split()), secrets)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
    text = _KEYISH.sub("***", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class CallResult:
    """A successful reply.

    Attributes:
        text: completion text (hidden reasoning, when returned, wrapped in ``<think>``).
        refused: the provider flagged it as a refusal or content-filtered it.
        finish_reason: provider's finish reason.
        input_tokens: prompt tokens (None: not reported).
        output_tokens: completion tokens including reasoning.
        reasoning_tokens: reasoning tokens (None: not reported).
        provider_cost: dollars as litellm priced it (None: unknown).
        latency: seconds from send to reply.
        cached_input_tokens: prompt tokens the provider read from its prompt cache
            (part of ``input_tokens``; None: not reported).
        cache_write_tokens: prompt tokens written to the provider's prompt cache
            (Anthropic bills them above the input price; part of ``input_tokens``).
        logprobs: the reply's tokens with their log-probabilities
            (``choices[0].logprobs.content``); None when the reply carries none.
    """

    text: str
    refused: bool = False
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    provider_cost: float | None = None
    latency: float = 0.0
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    logprobs: tuple[Any, ...] | None = None


def token_logprobs(choice: Any) -> tuple[Any, ...] | None:
    """``choice.logprobs.content`` of an OpenAI-style choice (a dict or the SDK's object); None if absent."""
    holder = _field(choice, "logprobs")
    content = _field(holder, "content") if holder is not None else None
    return tuple(content) if isinstance(content, (list, tuple)) else None


class CallError(Exception):
    """A failed attempt, classified.

    Args:
        kind: ``rate_limit``, ``timeout``, ``server``, ``connection``, ``malformed``,
            ``auth``, ``not_found``, ``bad_request``, ``content_policy``,
            ``context_window`` or ``other``.
        name: exception class name shown in the error outcome.
        message: short, key-free description.
        retryable: worth trying again.
        fatal: stop the whole run.
        retry_after: seconds the server asked to wait.
        unreachable: no connection could be opened at all (refused, unknown host),
            as opposed to one dropped mid-reply: what a dead server looks like.
    """

    def __init__(
        self,
        kind: str,
        name: str,
        message: str,
        *,
        retryable: bool,
        fatal: bool = False,
        retry_after: float | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(f"{name}: {message}")
        self.kind = kind
        self.name = name
        self.message = message
        self.retryable = retryable
        self.fatal = fatal
        self.retry_after = retry_after
        self.unreachable = unreachable


class ChatClient(Protocol):
    """Sends one request; raises :class:`CallError` on failure."""

    async def call(self, request: ChatRequest) -> CallResult: ...

    async def aclose(self) -> None: ...


def assemble_text(content: Any, reasoning: Any) -> str:
    """Completion text to keep: reasoning (if the API returned it separately) then answer.

    Keys are redacted here, so a server echoing one never gets it into a sample or the cache.
    """
    text = content if isinstance(content, str) else ""
    if isinstance(reasoning, str) and reasoning.strip() and "</think>" not in text:
        text = f"<think>{reasoning.strip()}</think>\n{text}"
    return redact(text)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _field(holder: Any, name: str) -> Any:
    return holder.get(name) if isinstance(holder, dict) else getattr(holder, name, None)


def prompt_cache_tokens(usage: Any) -> dict[str, int | None]:
    """Prompt-cache reads and writes in a reply's usage, whichever provider's names it uses.

    OpenAI (and litellm's normalised usage, which maps Gemini's
    ``cached_content_token_count`` there): ``prompt_tokens_details.cached_tokens``;
    Anthropic: ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.

    Args:
        usage: the reply's ``usage`` (a dict, or litellm's usage object).

    Returns:
        ``cached_input_tokens`` and ``cache_write_tokens`` for :class:`CallResult`.
    """
    details = _field(usage, "prompt_tokens_details")
    read = _int(_field(details, "cached_tokens")) if details is not None else None
    anthropic_read = _int(_field(usage, "cache_read_input_tokens"))
    if anthropic_read is not None and not read:
        read = anthropic_read
    if read is None:
        read = _int(_field(usage, "cached_content_token_count"))
    return {"cached_input_tokens": read, "cache_write_tokens": _int(_field(usage, "cache_creation_input_tokens"))}


def import_litellm() -> Any:
    """Import litellm quietly and offline (no price-list download, no banners)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import logging

    import litellm

    litellm.suppress_debug_info = True
    litellm.set_verbose = False
    # litellm logs every failed call at WARNING/ERROR; we report failures ourselves.
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return litellm


# Names of the exceptions (anywhere in the cause chain) that mean "could not connect at
# all": litellm reports a refused connection as an InternalServerError for most providers.
_CONNECT_FAILURES = frozenset({"ConnectError", "ClientConnectorError", "ConnectionRefusedError",
                               "ClientConnectorDNSError"})


def _cause_names(exc: BaseException) -> set[str]:
    names: set[str] = set()
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 16:
        seen.add(id(current))
        names.add(type(current).__name__)
        current = current.__cause__ or current.__context__
    return names


def _server_retry_after(exc: BaseException) -> float | None:
    """The wait a failed reply asked for, wherever this litellm release put its headers.

    Releases up to 1.106 keep the server's headers only on ``litellm_response_headers``
    (``exc.response`` is a stand-in with none); later ones also fill ``exc.response``.
    Both are read so that an upgrade in either direction keeps honouring ``Retry-After``.
    """
    for headers in (getattr(exc, "litellm_response_headers", None),
                    getattr(getattr(exc, "response", None), "headers", None)):
        if headers is not None:
            wait = parse_retry_after(headers)
            if wait is not None:
                return wait
    return None


def classify_litellm(exc: BaseException, secrets: tuple[str, ...] = ()) -> CallError:
    """Map a litellm exception to a :class:`CallError`."""
    litellm = import_litellm()
    name = type(exc).__name__
    raw = str(getattr(exc, "message", None) or exc)
    # litellm prefixes messages with the class name, sometimes twice, and the provider:
    # "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect ...".
    raw = _LITELLM_PREFIX.sub("", raw)
    message = sanitize(raw, secrets)
    status = getattr(exc, "status_code", None)
    retry_after = _server_retry_after(exc)

    def error(kind: str, retryable: bool, fatal: bool = False) -> CallError:
        return CallError(kind, name, message, retryable=retryable, fatal=fatal, retry_after=retry_after)

    if not isinstance(exc, litellm.Timeout) and _cause_names(exc) & _CONNECT_FAILURES:
        return CallError("connection", "APIConnectionError", message, retryable=True, unreachable=True)
    if status == 404 and not isinstance(exc, litellm.RateLimitError):
        # Some providers' 404s arrive as APIError or BadRequestError: it is still a
        # wrong model or URL, not a bad parameter.
        return error("not_found", False, fatal=True)
    if isinstance(exc, litellm.BadRequestError) and "LLM Provider NOT provided" in raw:
        return error("not_found", False, fatal=True)
    if isinstance(exc, litellm.ContextWindowExceededError):
        return error("context_window", False)
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return error("content_policy", False)
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)):
        return error("auth", False, fatal=True)
    if isinstance(exc, litellm.NotFoundError):
        return error("not_found", False, fatal=True)
    if isinstance(exc, (litellm.BadRequestError, litellm.UnprocessableEntityError)):
        return error("bad_request", False, fatal=True)
    if isinstance(exc, litellm.RateLimitError):
        return error("rate_limit", True)
    if isinstance(exc, litellm.Timeout):
        return error("timeout", True)
    if isinstance(exc, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)):
        return error("server", True)
    if isinstance(exc, litellm.APIConnectionError):
        return error("connection", True)
    if isinstance(exc, litellm.APIResponseValidationError):
        return error("malformed", True)
    if isinstance(exc, litellm.APIError):
        transient = isinstance(status, int) and (status >= 500 or status in (408, 409, 425))
        return error("server" if transient else "other", transient)
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return error("connection", True)
    if isinstance(exc, ValueError) and "json" in raw.lower():
        return error("malformed", True)
    return error("other", False)


class LiteLLMClient:
    """Calls ``litellm.acompletion`` with litellm's retries off.

    Args:
        model: litellm model id.
        api_base: server URL, or None for the provider default.
        api_key: key to pass (None: litellm reads the provider's environment variable).
        timeout: seconds per attempt.
    """

    def __init__(self, model: str, api_base: str | None, api_key: str | None, timeout: float) -> None:
        self._litellm = import_litellm()
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        # A key or option in the address's query (``.../v1?key=K``): litellm's OpenAI path hands the
        # address to the OpenAI client, which appends ``/chat/completions`` after the query (the
        # request went to ``/v1?key=K/chat/completions``: wrong path, key corrupted). The query is
        # given to the client as its default query instead; vLLM's path takes the whole URL.
        self._query: dict[str, str] = {}
        self._clients: dict[int, Any] = {}
        if api_base and urlsplit(api_base).query:
            provider = model.split("/", 1)[0] if "/" in model else "openai"
            if provider == "openai":
                parts = urlsplit(api_base)
                self._query = dict(parse_qsl(parts.query, keep_blank_values=True))
                self.api_base = urlunsplit(parts._replace(query="", fragment=""))
            elif provider == "hosted_vllm":
                self.api_base = join_path(api_base, "/chat/completions")
        self.timeout = timeout
        self._secrets = register_secret(api_key)
        from prb_tasks.judge.prompt_cache import anthropic_min_tokens

        self._cache_min_tokens = anthropic_min_tokens(model)

    def _messages(self, request: ChatRequest) -> list[dict[str, Any]]:
        """The messages to send: with a prompt-cache breakpoint where the provider needs one."""
        if self._cache_min_tokens is not None and request.shared_prefix:
            from prb_tasks.judge.prompt_cache import with_breakpoint

            return with_breakpoint(request.messages, request.shared_prefix, self._cache_min_tokens)
        return [dict(m) for m in request.messages]

    async def call(self, request: ChatRequest) -> CallResult:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(request),
            "timeout": self.timeout,
            # We own retries: litellm's multiply requests (2N+1 for OpenAI) and hide failures.
            "max_retries": 0,
            **request.params(),
        }
        if self._query:
            kwargs["client"] = self._query_client()
        elif self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        started = time.perf_counter()
        try:
            # litellm's own timeout bounds each read, not the attempt: a server trickling a
            # byte at a time kept one attempt alive for minutes (for ever, if it never ends).
            response = await asyncio.wait_for(self._litellm.acompletion(**kwargs), self.timeout)
        except asyncio.TimeoutError:
            raise CallError("timeout", "Timeout", f"no whole reply within {self.timeout:g}s (timeout=)",
                            retryable=True) from None
        except Exception as exc:  # noqa: BLE001 - every failure is classified, none escapes raw
            raise classify_litellm(exc, self._secrets) from None
        latency = time.perf_counter() - started
        return self._result(response, latency)

    def _query_client(self) -> Any:
        """The OpenAI client that sends :attr:`_query` with every request, one per event loop
        (its connection pool belongs to the loop that opened it)."""
        loop = id(asyncio.get_running_loop())
        client = self._clients.get(loop)
        if client is None:
            from openai import AsyncOpenAI

            key = self._api_key or os.environ.get("OPENAI_API_KEY") or "none"  # a local server may want none
            client = self._clients[loop] = AsyncOpenAI(base_url=self.api_base, api_key=key, max_retries=0,
                                                       timeout=self.timeout, default_query=self._query)
        return client

    def _result(self, response: Any, latency: float) -> CallResult:
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise CallError("malformed", "MalformedResponse", "reply has no choices", retryable=True)
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        reasoning = getattr(message, "reasoning_content", None)
        extra = getattr(message, "provider_specific_fields", None) or {}
        refusal = (extra.get("refusal") if isinstance(extra, dict) else None) or getattr(message, "refusal", None)
        finish = getattr(choice, "finish_reason", None)
        usage = getattr(response, "usage", None)
        details = getattr(usage, "completion_tokens_details", None)
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
        return CallResult(
            text=assemble_text(content, reasoning),
            refused=bool(refusal) or finish == "content_filter",
            finish_reason=finish,
            input_tokens=_int(getattr(usage, "prompt_tokens", None)),
            output_tokens=_int(getattr(usage, "completion_tokens", None)),
            reasoning_tokens=_int(getattr(details, "reasoning_tokens", None)),
            provider_cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
            latency=latency,
            logprobs=token_logprobs(choice),
            **prompt_cache_tokens(usage),
        )

    async def settle(self, timeout: float = 3.0) -> None:
        """Wait (briefly) until litellm has finished its background work for our calls.

        After each call litellm logs it on a thread pool and on an async worker; if
        that is still running when the run returns, it overlaps the caller's next steps
        (on CPython 3.11.7, concurrent ``ast.parse`` in two threads -- litellm's
        ``get_secret`` uses ``ast.literal_eval`` -- can raise ``SystemError``). Best
        effort: only litellm's own counters are read, and we give up after ``timeout``.
        """
        try:
            from litellm.litellm_core_utils.logging_worker import (
                GLOBAL_LOGGING_WORKER as worker,  # noqa: N811 - litellm's name, a local one here
            )
            from litellm.litellm_core_utils.thread_pool_executor import executor
        except ImportError:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            slots = getattr(executor, "_pending_slots", None)
            cap = getattr(executor, "_max_pending_tasks", None)
            pool_idle = slots is None or cap is None or getattr(slots, "_value", cap) >= cap
            queue = getattr(worker, "_queue", None)
            worker_idle = (queue is None or queue.empty()) and not getattr(worker, "_running_tasks", None)
            if pool_idle and worker_idle:
                return
            await asyncio.sleep(0.01)

    async def aclose(self) -> None:
        return None

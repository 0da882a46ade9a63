"""The OpenAI chat protocol spoken directly, for OpenAI-compatible servers.

litellm spends about 4 ms of CPU per call (request building, logging objects,
pricing lookups, response models). Against a hosted API that is noise; against a
local vLLM or llama.cpp server answering hundreds of requests per second it is the
bottleneck, and it caps a 2-core machine at ~250 calls/s. For ``openai/<name>`` and
``hosted_vllm/<name>`` models with an ``api_base`` -- which litellm itself treats
as "a generic OpenAI-compatible server" -- this client posts the same JSON body to
``<api_base>/chat/completions`` with aiohttp (~0.3 ms per call) and classifies
failures exactly like :mod:`prb_tasks.judge.client`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from prb_tasks.common.redact import register_secret
from prb_tasks.common.replies import MAX_REPLY_BYTES, ReplyTooDeep, ReplyTooLarge, loads_reply
from prb_tasks.common.retry import parse_retry_after
from prb_tasks.common.urls import join_path
from prb_tasks.judge.client import (
    CallError,
    CallResult,
    _int,
    assemble_text,
    prompt_cache_tokens,
    sanitize,
    token_logprobs,
)
from prb_tasks.judge.options import OPENAI_COMPATIBLE_PREFIXES
from prb_tasks.judge.request import ChatRequest

# HTTP status -> (kind, exception name shown in outcomes, retryable, fatal). Names
# follow litellm's so error outcomes read the same whichever transport made them.
_STATUS: dict[int, tuple[str, str, bool, bool]] = {
    400: ("bad_request", "BadRequestError", False, True),
    401: ("auth", "AuthenticationError", False, True),
    403: ("auth", "PermissionDeniedError", False, True),
    404: ("not_found", "NotFoundError", False, True),
    408: ("timeout", "Timeout", True, False),
    409: ("server", "ConflictError", True, False),
    413: ("context_window", "ContextWindowExceededError", False, False),
    422: ("bad_request", "UnprocessableEntityError", False, True),
    429: ("rate_limit", "RateLimitError", True, False),
    502: ("server", "BadGatewayError", True, False),
    503: ("server", "ServiceUnavailableError", True, False),
}


def served_name(model: str) -> str:
    """The model name the server knows (the litellm provider prefix removed)."""
    for prefix in OPENAI_COMPATIBLE_PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix):]
    return model


def status_error(status: int, payload: bytes, headers: Any, secrets: tuple[str, ...] = ()) -> CallError:
    """Classify a non-200 HTTP reply of an OpenAI-style API (also used for batch APIs).

    Args:
        status: HTTP status.
        payload: reply body (its ``error.message`` is shown when present).
        headers: reply headers (for ``Retry-After``).
        secrets: exact strings to keep out of the message.
    """
    kind, name, retryable, fatal = _STATUS.get(
        status,
        ("server", "InternalServerError", True, False) if status >= 500 else ("other", "APIError", False, False),
    )
    message = sanitize(f"HTTP {status}: {_error_text(payload)}", secrets)
    return CallError(kind, name, message, retryable=retryable, fatal=fatal, retry_after=parse_retry_after(headers))


def chat_completion_result(data: Any, latency: float = 0.0) -> CallResult:
    """Read an OpenAI chat completion (parsed JSON); raises a retryable :class:`CallError` if it is not one."""
    try:
        choice = data["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        raise CallError("malformed", "MalformedResponse", "reply is not a chat completion", retryable=True) from None
    usage = data.get("usage") or {}
    details = usage.get("completion_tokens_details") or {}
    finish = choice.get("finish_reason")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return CallResult(
        text=assemble_text(message.get("content"), reasoning),
        refused=bool(message.get("refusal")) or finish == "content_filter",
        finish_reason=finish,
        input_tokens=_int(usage.get("prompt_tokens")),
        output_tokens=_int(usage.get("completion_tokens")),
        reasoning_tokens=_int(details.get("reasoning_tokens")) if isinstance(details, dict) else None,
        provider_cost=None,
        latency=latency,
        logprobs=token_logprobs(choice),
        **prompt_cache_tokens(usage),
    )


async def _read_capped(reply: Any, limit: int | None = None) -> bytes:
    """The body of an aiohttp reply, read in chunks; :class:`ReplyTooLarge` past ``limit`` bytes
    (default :data:`MAX_REPLY_BYTES`; announced by Content-Length or counted), before more than
    ``limit`` is held."""
    limit = MAX_REPLY_BYTES if limit is None else limit
    if (reply.content_length or 0) > limit:
        raise ReplyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in reply.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > limit:
            raise ReplyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _error_text(body: bytes) -> str:
    try:
        data = loads_reply(body)
    except ValueError:
        return body.decode("utf-8", "replace")
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return str(err.get("message") or err)
        return str(err)
    return str(data)


class DirectOpenAIClient:
    """POSTs to ``<api_base>/chat/completions``.

    Args:
        model: litellm model id (``openai/<name>`` or ``hosted_vllm/<name>``).
        api_base: server URL including the ``/v1`` part, as for litellm.
        api_key: bearer token, or None to send none.
        timeout: seconds per attempt.
        max_connections: connection pool size (at least the concurrency).
    """

    def __init__(
        self, model: str, api_base: str, api_key: str | None, timeout: float, max_connections: int
    ) -> None:
        self.model = model
        self.url = join_path(api_base, "/chat/completions")
        self.timeout = timeout
        self._name = served_name(model)
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._secrets = register_secret(api_key)
        self._max_connections = max_connections
        self._session: Any = None
        import aiohttp  # noqa: F401 - imported here, not on the event loop at the first call

    def _ensure_session(self) -> Any:
        import aiohttp

        if self._session is None or self._session.closed:
            # Idle connections are dropped after 4 s, before servers such as uvicorn (5 s)
            # close them under us, which would turn a reused connection into an error.
            connector = aiohttp.TCPConnector(limit=self._max_connections, ttl_dns_cache=300, keepalive_timeout=4)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=self.timeout)
            )
        return self._session

    async def call(self, request: ChatRequest) -> CallResult:
        import aiohttp

        body = {"model": self._name, "messages": [dict(m) for m in request.messages], **request.params()}
        session = self._ensure_session()
        started = time.perf_counter()
        try:
            async with session.post(self.url, json=body, headers=self._headers) as reply:
                status = reply.status
                payload = await _read_capped(reply)
                headers = reply.headers
        except ReplyTooLarge as exc:
            # Not retried: a server that sends this once will again, and each try costs the cap.
            raise CallError("malformed", "ReplyTooLarge", str(exc), retryable=False) from None
        except asyncio.TimeoutError:
            raise CallError("timeout", "Timeout", f"no reply within {self.timeout:g}s", retryable=True) from None
        except aiohttp.ClientError as exc:
            raise CallError(
                "connection", "APIConnectionError", sanitize(f"{type(exc).__name__}: {exc}", self._secrets),
                retryable=True, unreachable=isinstance(exc, aiohttp.ClientConnectorError),
            ) from None
        latency = time.perf_counter() - started
        if status != 200:
            raise self._status_error(status, payload, headers)
        return self._result(payload, latency)

    def _status_error(self, status: int, payload: bytes, headers: Any) -> CallError:
        return status_error(status, payload, headers, self._secrets)

    def _result(self, payload: bytes, latency: float) -> CallResult:
        try:
            data = loads_reply(payload)
        except ReplyTooDeep as exc:
            raise CallError("malformed", "MalformedResponse", str(exc), retryable=False) from None
        except ValueError:
            raise CallError("malformed", "MalformedResponse", "reply is not a chat completion",
                            retryable=True) from None
        return chat_completion_result(data, latency)

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

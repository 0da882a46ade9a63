"""The two batch APIs behind one small interface.

* **OpenAI** (files + batches): through litellm's ``acreate_file``, ``acreate_batch``,
  ``aretrieve_batch``, ``afile_content``, ``acancel_batch`` and ``alist_batches``, which
  work with the installed litellm (1.106.2). Its failures are the OpenAI SDK's
  exceptions, classified here like every other failure.
* **Anthropic** (message batches): spoken directly over HTTP with aiohttp. litellm
  1.106.2 can retrieve an Anthropic batch and read its results, but creating and
  cancelling one raise ``NotImplementedError``, so one direct client does it all.

Each call is retried on transient failures (:mod:`prb_tasks.common.retry`). Creating a batch is
not idempotent: after a failure whose reply was lost, the provider's batch list is
checked for it before trying again, so a timeout never submits the same requests twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from prb_tasks.common.redact import register_secret
from prb_tasks.common.retry import RetryPolicy, parse_retry_after
from prb_tasks.judge.client import (
    CallError,
    CallResult,
    assemble_text,
    classify_litellm,
    import_litellm,
    sanitize,
)
from prb_tasks.judge.direct import chat_completion_result, status_error
from prb_tasks.judge.errors import JudgeConfigError

T = TypeVar("T")

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_ANTHROPIC_BASE = "https://api.anthropic.com"
# Requests per batch and bytes per batch input, a little under each provider's limits.
OPENAI_LIMITS = (50_000, 190_000_000)
ANTHROPIC_LIMITS = (100_000, 240_000_000)


@dataclass
class BatchStatus:
    """A batch as the provider reports it, in our terms.

    Attributes:
        batch_id: the provider's id.
        status: the provider's own status word.
        ended: no request will run any more.
        end: with ``ended``: ``completed``, ``expired``, ``cancelled`` or ``failed``.
        total: requests in the batch (0 while the provider has not counted them).
        done: requests answered successfully so far.
        failed: requests that failed (expired and cancelled ones included for OpenAI).
        message: why the batch failed, if it did.
        created: Unix time the provider created it.
        files: OpenAI output and error file ids.
    """

    batch_id: str
    status: str
    ended: bool
    end: str | None = None
    total: int = 0
    done: int = 0
    failed: int = 0
    message: str | None = None
    created: float | None = None
    files: list[str] = field(default_factory=list)


@dataclass
class ItemResult:
    """What became of one request in an ended batch.

    Attributes:
        custom_id: the id we gave it.
        outcome: ``ok``, ``error`` or ``unfinished`` (expired or cancelled before it ran).
        result: the answer, when ``ok``.
        error: the failure, when ``error``.
    """

    custom_id: str
    outcome: str
    result: CallResult | None = None
    error: CallError | None = None


async def with_retries(call: Callable[[], Awaitable[T]], retry: RetryPolicy,
                       before_retry: Callable[[], Awaitable[T | None]] | None = None) -> T:
    """Run ``call``, retrying transient :class:`CallError` failures.

    Args:
        call: makes one attempt.
        retry: backoff policy.
        before_retry: asked before each retry; a non-None value is taken as the result
            (used to find a batch whose creation reply was lost).
    """
    failures = 0
    while True:
        try:
            return await call()
        except CallError as err:
            failures += 1
            if not err.retryable or not retry.should_retry(failures):
                raise
            await asyncio.sleep(retry.delay(failures, err.retry_after))
            if before_retry is not None:
                found = await before_retry()
                if found is not None:
                    return found


def _openai_error(exc: BaseException, secrets: tuple[str, ...]) -> CallError:
    """Classify a failure of litellm's OpenAI file/batch functions (raw OpenAI SDK errors)."""
    if isinstance(exc, CallError):
        return exc
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        response = getattr(exc, "response", None)
        body = getattr(exc, "body", None)
        text = json.dumps(body) if body is not None else str(getattr(exc, "message", "") or exc)
        return status_error(status, text.encode(), getattr(response, "headers", None), secrets)
    name = type(exc).__name__
    if "Timeout" in name:
        return CallError("timeout", "Timeout", sanitize(exc, secrets), retryable=True)
    if "Connection" in name:
        return CallError("connection", "APIConnectionError", sanitize(exc, secrets), retryable=True)
    return classify_litellm(exc, secrets)


def _result_lines(text: str, parse: Callable[[dict[str, Any]], ItemResult | None]) -> list[ItemResult]:
    """Parse a results JSONL document; lines that are not results with a custom id are skipped."""
    items = []
    for line in text.splitlines():
        try:
            data = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("custom_id"), str):
            item = parse(data)
            if item is not None:
                items.append(item)
    return items


def _timestamp(value: Any) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


class OpenAIBatchAPI:
    """OpenAI files + batches through litellm.

    Args:
        api_base: server URL ending in ``/v1`` (None: litellm's default, api.openai.com).
        api_key: the key (None: litellm reads ``OPENAI_API_KEY``).
        timeout: seconds per HTTP call (uploads and downloads of large files included).
        retry: backoff for transient failures.
    """

    provider = "openai"
    limits = OPENAI_LIMITS

    def __init__(self, api_base: str | None, api_key: str | None, timeout: float, retry: RetryPolicy) -> None:
        self._litellm = import_litellm()
        # litellm 1.106.2's afile_content sometimes runs its synchronous half twice; the
        # second coroutine is dropped unsent (one download, checked against the fake
        # server) but Python warns about it when collecting it.
        warnings.filterwarnings("ignore", message="coroutine 'OpenAIFilesAPI.afile_content' was never awaited",
                                category=RuntimeWarning)
        self._kwargs: dict[str, Any] = {"custom_llm_provider": "openai", "max_retries": 0, "timeout": timeout}
        if api_base:
            self._kwargs["api_base"] = api_base
        if api_key:
            self._kwargs["api_key"] = api_key
        self._secrets = register_secret(api_key)
        self.retry = retry

    async def _call(self, name: str, **kwargs: Any) -> Any:
        try:
            return await getattr(self._litellm, name)(**kwargs, **self._kwargs)
        except Exception as exc:  # noqa: BLE001 - every failure is classified
            raise _openai_error(exc, self._secrets) from None

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        item = {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}
        return json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"

    async def submit(self, lines: list[bytes], job_id: str, model: str,
                     on_file: Callable[[str], None]) -> tuple[str, BatchStatus | None]:
        data = b"".join(lines)
        uploaded = await with_retries(
            lambda: self._call("acreate_file", file=(f"prb-{job_id}.jsonl", data), purpose="batch"), self.retry)
        file_id = str(uploaded.id)
        on_file(file_id)

        async def create() -> tuple[str, BatchStatus | None]:
            batch = await self._call("acreate_batch", completion_window="24h", endpoint="/v1/chat/completions",
                                     input_file_id=file_id, metadata={"prb_job": job_id, "prb_model": model})
            return str(batch.id), self._status(batch)

        async def lost() -> tuple[str, BatchStatus | None] | None:
            found = await self.find(file_id, len(lines), 0.0, set())
            return (found, None) if found else None

        return await with_retries(create, self.retry, lost)

    async def find(self, input_file_id: str | None, requests: int, since: float, known: set[str]) -> str | None:
        if not input_file_id:
            return None
        page = await with_retries(lambda: self._call("alist_batches", limit=100), self.retry)
        for batch in getattr(page, "data", None) or []:
            if getattr(batch, "input_file_id", None) == input_file_id:
                return str(batch.id)
        return None

    async def retrieve(self, batch_id: str) -> BatchStatus:
        batch = await with_retries(lambda: self._call("aretrieve_batch", batch_id=batch_id), self.retry)
        return self._status(batch)

    @staticmethod
    def _status(batch: Any) -> BatchStatus:
        status = str(getattr(batch, "status", "") or "")
        counts = getattr(batch, "request_counts", None)
        errors = getattr(batch, "errors", None)
        message = None
        data = getattr(errors, "data", None) if errors is not None else None
        if data:
            first = data[0]
            message = str(getattr(first, "message", None)
                          or (first.get("message") if isinstance(first, dict) else first))
        ended = status in ("completed", "expired", "cancelled", "failed")
        return BatchStatus(
            batch_id=str(batch.id), status=status, ended=ended, end=status if ended else None,
            total=int(getattr(counts, "total", 0) or 0), done=int(getattr(counts, "completed", 0) or 0),
            failed=int(getattr(counts, "failed", 0) or 0), message=message,
            created=_timestamp(getattr(batch, "created_at", None)),
            files=[f for f in (getattr(batch, "output_file_id", None), getattr(batch, "error_file_id", None)) if f],
        )

    async def results(self, status: BatchStatus) -> list[ItemResult]:
        items: list[ItemResult] = []
        for file_id in status.files:
            content = await with_retries(partial(self._call, "afile_content", file_id=file_id), self.retry)
            raw = getattr(content, "content", content)
            text = raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
            items.extend(_result_lines(text, self._item))
        return items

    def _item(self, data: dict[str, Any]) -> ItemResult | None:
        custom_id = data["custom_id"]
        response = data.get("response")
        error = data.get("error")
        if isinstance(response, dict):
            status = response.get("status_code")
            body = response.get("body")
            if status == 200:
                try:
                    return ItemResult(custom_id, "ok", result=chat_completion_result(body))
                except CallError as err:
                    return ItemResult(custom_id, "error", error=err)
            payload = json.dumps(body).encode() if body is not None else b""
            return ItemResult(custom_id, "error", error=status_error(int(status or 500), payload, None, self._secrets))
        code = str(error.get("code", "")) if isinstance(error, dict) else ""
        if code in ("batch_expired", "batch_cancelled"):
            return ItemResult(custom_id, "unfinished")
        message = str(error.get("message", "")) if isinstance(error, dict) else "no response"
        return ItemResult(custom_id, "error", error=CallError(
            "server", "BatchRequestError", sanitize(f"{code}: {message}", self._secrets), retryable=True))

    async def cancel(self, batch_id: str) -> BatchStatus:
        batch = await with_retries(lambda: self._call("acancel_batch", batch_id=batch_id), self.retry)
        return self._status(batch)

    async def aclose(self) -> None:
        return None


# Anthropic error types -> (kind, exception name, retryable).
_ANTHROPIC_ERRORS: dict[str, tuple[str, str, bool]] = {
    "invalid_request_error": ("bad_request", "BadRequestError", False),
    "authentication_error": ("auth", "AuthenticationError", False),
    "permission_error": ("auth", "PermissionDeniedError", False),
    "not_found_error": ("not_found", "NotFoundError", False),
    "request_too_large": ("context_window", "RequestTooLarge", False),
    "rate_limit_error": ("rate_limit", "RateLimitError", True),
    "api_error": ("server", "InternalServerError", True),
    "overloaded_error": ("server", "InternalServerError", True),
}


def anthropic_message_result(message: Any) -> CallResult:
    """Read an Anthropic Messages API reply (parsed JSON)."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise CallError("malformed", "MalformedResponse", "reply is not an Anthropic message", retryable=True)
    text = "".join(b.get("text", "") for b in message["content"] if isinstance(b, dict) and b.get("type") == "text")
    thinking = "".join(b.get("thinking", "") for b in message["content"]
                       if isinstance(b, dict) and b.get("type") == "thinking")
    usage = message.get("usage") or {}

    def number(name: str) -> int | None:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    prompt = number("input_tokens")
    if prompt is not None:
        prompt += (number("cache_creation_input_tokens") or 0) + (number("cache_read_input_tokens") or 0)
    stop = message.get("stop_reason")
    return CallResult(text=assemble_text(text, thinking or None), refused=stop == "refusal", finish_reason=stop,
                      input_tokens=prompt, output_tokens=number("output_tokens"))


class AnthropicBatchAPI:
    """Anthropic message batches over HTTP (aiohttp).

    Args:
        api_base: server URL as litellm takes it, without ``/v1`` (None: api.anthropic.com).
        api_key: the key (``x-api-key``).
        timeout: seconds per HTTP call.
        retry: backoff for transient failures.
    """

    provider = "anthropic"
    limits = ANTHROPIC_LIMITS

    def __init__(self, api_base: str | None, api_key: str | None, timeout: float, retry: RetryPolicy) -> None:
        base = (api_base or DEFAULT_ANTHROPIC_BASE).rstrip("/")
        self.url = base.removesuffix("/v1/messages") + "/v1/messages/batches"
        self._headers = {"anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"}
        if api_key:
            self._headers["x-api-key"] = api_key
        self._secrets = register_secret(api_key)
        self.timeout = timeout
        self.retry = retry
        self._session: Any = None

    def _ensure(self) -> Any:
        import aiohttp

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self._session

    async def _request(self, method: str, url: str, body: bytes | None = None) -> bytes:
        import aiohttp

        try:
            async with self._ensure().request(method, url, data=body, headers=self._headers) as reply:
                payload = await reply.read()
                status, headers = reply.status, reply.headers
        except asyncio.TimeoutError:
            raise CallError("timeout", "Timeout", f"no reply within {self.timeout:g}s", retryable=True) from None
        except aiohttp.ClientError as exc:
            raise CallError("connection", "APIConnectionError",
                            sanitize(f"{type(exc).__name__}: {exc}", self._secrets), retryable=True) from None
        if status != 200:
            raise self._error(status, payload, headers)
        return payload

    def _error(self, status: int, payload: bytes, headers: Any) -> CallError:
        try:
            err = json.loads(payload).get("error") or {}
        except (ValueError, AttributeError):
            err = {}
        kind = err.get("type") if isinstance(err, dict) else None
        if isinstance(kind, str) and kind in _ANTHROPIC_ERRORS and status != 529:
            mapped, name, retryable = _ANTHROPIC_ERRORS[kind]
            message = sanitize(f"HTTP {status}: {err.get('message', '')}", self._secrets)
            return CallError(mapped, name, message, retryable=retryable, fatal=mapped in ("auth", "not_found"),
                             retry_after=parse_retry_after(headers))
        return status_error(status, payload, headers, self._secrets)

    async def _json(self, method: str, url: str, body: bytes | None = None) -> Any:
        payload = await with_retries(lambda: self._request(method, url, body), self.retry)
        try:
            return json.loads(payload)
        except ValueError:
            raise CallError("malformed", "MalformedResponse", "reply is not JSON", retryable=True) from None

    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        return json.dumps({"custom_id": custom_id, "params": body}, ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8")

    async def submit(self, lines: list[bytes], job_id: str, model: str,
                     on_file: Callable[[str], None]) -> tuple[str, BatchStatus | None]:
        body = b'{"requests":[' + b",".join(lines) + b"]}"
        started = time.time()

        async def create() -> tuple[str, BatchStatus | None]:
            data = json.loads(await self._request("POST", self.url, body))
            status = self._status(data)
            return status.batch_id, status

        async def lost() -> tuple[str, BatchStatus | None] | None:
            found = await self.find(None, len(lines), started, set())
            return (found, None) if found else None

        return await with_retries(create, self.retry, lost)

    async def find(self, input_file_id: str | None, requests: int, since: float, known: set[str]) -> str | None:
        # Message batches carry no metadata: a batch we may have created is recognized by
        # its size and by having been created after we started sending it.
        data = await self._json("GET", f"{self.url}?limit=100")
        matches = []
        for item in data.get("data", []) if isinstance(data, dict) else []:
            status = self._status(item)
            # A minute of slack for clock skew between us and the provider.
            if status.batch_id in known or status.created is None or status.created < since - 60:
                continue
            if status.total == requests:
                matches.append(status.batch_id)
        return matches[0] if len(matches) == 1 else None

    async def retrieve(self, batch_id: str) -> BatchStatus:
        return self._status(await self._json("GET", f"{self.url}/{batch_id}"))

    @staticmethod
    def _status(data: Any) -> BatchStatus:
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise CallError("malformed", "MalformedResponse", "reply is not a message batch", retryable=True)
        counts = data.get("request_counts") or {}

        def count(name: str) -> int:
            value = counts.get(name)
            return value if isinstance(value, int) else 0

        raw = str(data.get("processing_status", ""))
        ended = raw == "ended"
        end = None
        if ended:
            end = "expired" if count("expired") else "cancelled" if count("canceled") else "completed"
        total = sum(count(k) for k in ("processing", "succeeded", "errored", "canceled", "expired"))
        return BatchStatus(batch_id=data["id"], status=raw, ended=ended, end=end, total=total,
                           done=count("succeeded"), failed=count("errored") + count("expired") + count("canceled"),
                           created=_timestamp(data.get("created_at")))

    async def results(self, status: BatchStatus) -> list[ItemResult]:
        # Built from the API address, not taken from the reply's results_url, so the
        # key is only ever sent to the server the user configured.
        payload = await with_retries(lambda: self._request("GET", f"{self.url}/{status.batch_id}/results"),
                                     self.retry)
        return _result_lines(payload.decode("utf-8", "replace"), self._item)

    def _item(self, data: dict[str, Any]) -> ItemResult | None:
        custom_id = data["custom_id"]
        result = data.get("result")
        if not isinstance(result, dict):
            return None
        kind = result.get("type")
        if kind == "succeeded":
            try:
                return ItemResult(custom_id, "ok", result=anthropic_message_result(result.get("message")))
            except CallError as err:
                return ItemResult(custom_id, "error", error=err)
        if kind in ("expired", "canceled"):
            return ItemResult(custom_id, "unfinished")
        wrapper = result.get("error")
        if not isinstance(wrapper, dict):
            wrapper = {}
        detail = wrapper.get("error")
        if not isinstance(detail, dict):
            detail = wrapper
        etype = str(detail.get("type", ""))
        mapped, name, retryable = _ANTHROPIC_ERRORS.get(etype, ("server", "BatchRequestError", True))
        message = sanitize(f"{etype}: {detail.get('message', '')}", self._secrets)
        return ItemResult(custom_id, "error", error=CallError(mapped, name, message, retryable=retryable))

    async def cancel(self, batch_id: str) -> BatchStatus:
        return self._status(await self._json("POST", f"{self.url}/{batch_id}/cancel"))

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


def batch_api(provider: str, api_base: str | None, api_key: str | None, timeout: float,
              retry: RetryPolicy) -> OpenAIBatchAPI | AnthropicBatchAPI:
    """The batch API client for ``provider`` (``openai`` or ``anthropic``)."""
    if provider == "openai":
        return OpenAIBatchAPI(api_base, api_key, timeout, retry)
    if provider == "anthropic":
        return AnthropicBatchAPI(api_base, api_key, timeout, retry)
    raise JudgeConfigError(f"prb-judge: no batch API for provider {provider!r}; batch=true needs openai/ or anthropic/")


_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
# OpenAI's client refuses to start without some key; local test servers check none.
_PLACEHOLDER_KEY = "sk-no-key-required"


def batch_key(provider: str, api_base: str | None, api_key_env: str | None) -> str:
    """The key for batch calls, from ``api_key_env`` or the provider's usual variable.

    Raises :class:`JudgeConfigError` (one line naming the variable) when there is none;
    an OpenAI-compatible server at ``api_base`` may go without one.
    """
    variable = api_key_env or _KEY_VARIABLES.get(provider, "")
    key = os.environ.get(variable) if variable else None
    if key:
        return key
    if provider == "openai" and api_base and not api_key_env:
        return _PLACEHOLDER_KEY
    raise JudgeConfigError(f"prb-judge: batch=true with {provider} needs {variable} in the environment "
                           "(or api_key_env=NAME naming the variable that holds the key)")


def provider_of(model: str) -> str:
    """``openai`` or ``anthropic`` from a litellm model id."""
    return model.split("/", 1)[0]

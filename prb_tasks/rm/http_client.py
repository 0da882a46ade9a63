"""POST JSON with retries: the project's :class:`~prb_tasks.common.retry.RetryPolicy`, ``Retry-After`` honoured.

Standard library only (``urllib``), so scoring through a remote RM server needs no
extra dependency. Retried: HTTP 408, 425, 429 and 5xx, timeouts, refused or dropped
connections, and a 200 whose body is not JSON (a proxy hiccup). Anything else (a 4xx
that will not change on retry) fails at once.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from prb_tasks.common.redact import redact
from prb_tasks.common.replies import MAX_REPLY_BYTES, ReplyTooDeep, ReplyTooLarge, loads_reply
from prb_tasks.common.retry import RetryPolicy, parse_retry_after

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
# Never wait longer than this between attempts, whatever Retry-After says.
MAX_WAIT = 60.0


@dataclass
class HTTPFailure(Exception):
    """A request that failed for good.

    Attributes:
        url: where it was sent.
        attempts: requests made.
        status: last HTTP status (None for connection errors and timeouts).
        reason: short description of the last failure.
    """

    url: str
    attempts: int
    status: int | None
    reason: str

    def __str__(self) -> str:
        what = f"HTTP {self.status} {self.reason}" if self.status is not None else self.reason
        return f"request to {self.url} failed after {self.attempts} attempt(s): {what}"


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def post_json(
    url: str,
    body: Mapping[str, Any],
    *,
    timeout: float,
    max_retries: int,
    headers: Mapping[str, str] | None = None,
    backoff_base: float = 0.5,
    backoff_cap: float = 20.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """POST ``body`` as JSON and return the decoded JSON reply.

    Args:
        url: full URL.
        body: JSON-serialisable request.
        timeout: seconds to wait for one reply.
        max_retries: further attempts after the first one fails in a retryable way.
        headers: extra request headers (e.g. ``Authorization``).
        backoff_base: delay before the first retry in seconds (doubles each retry).
        backoff_cap: largest computed delay in seconds.
        sleep: how to wait (tests pass a fake).

    Raises:
        HTTPFailure: a non-retryable error, or retries used up.
    """
    policy = RetryPolicy(max_retries=max_retries, base=backoff_base, cap=backoff_cap)
    data = json.dumps(body).encode("utf-8")
    request_headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
    attempt = 0
    while True:
        attempt += 1
        status: int | None = None
        wait: float | None = None
        try:
            request = urllib.request.Request(url, data=data, headers=request_headers, method="POST")
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read(MAX_REPLY_BYTES + 1)  # never more than the cap in memory
            try:
                if len(raw) > MAX_REPLY_BYTES:
                    raise ReplyTooLarge(MAX_REPLY_BYTES)
                return loads_reply(raw)
            except (ReplyTooLarge, ReplyTooDeep) as exc:
                # Not retried: a server that sends this once will again, and each try costs the cap.
                retryable, reason = False, str(exc)
            except ValueError:
                retryable, reason = True, f"reply is not JSON: {_one_line(raw.decode('utf-8', 'replace'))!r}"
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                detail = _one_line(exc.read(64 * 1024).decode("utf-8", "replace"))  # a line's worth
            except OSError:
                detail = ""
            reason = f"{exc.reason}" + (f": {detail}" if detail else "")
            retryable = status in RETRY_STATUS
            wait = parse_retry_after(exc.headers)
        except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException, OSError) as exc:
            inner = getattr(exc, "reason", exc)
            reason = f"{type(inner).__name__}: {inner}" if str(inner) else type(inner).__name__
            if isinstance(inner, TimeoutError):
                reason = f"no reply within {timeout:g} s"
            retryable = True
        if not retryable or not policy.should_retry(attempt):
            # A server may echo the bearer token back in its error body.
            raise HTTPFailure(url, attempt, status, redact(reason))
        sleep(min(policy.delay(attempt, wait), MAX_WAIT))

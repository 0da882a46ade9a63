"""Provider batch APIs for the fake server: OpenAI files + batches, Anthropic message batches.

:class:`FakeBatches` is owned by :class:`~prb_tasks.testing.fake_server.FakeLLMServer`
(``server.batches``) and answers these routes on the same port:

* OpenAI (with or without the ``/v1`` prefix): ``POST /v1/files`` (multipart ``purpose`` +
  ``file``), ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
  ``GET /v1/batches`` (``limit``, ``after``), ``GET /v1/batches/{id}``,
  ``POST /v1/batches/{id}/cancel``.
* Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches`` (``limit``,
  ``after_id``), ``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``,
  ``POST /v1/messages/batches/{id}/cancel``.

Batches do not run on a clock: each one follows a :class:`BatchScript` (queued with
:meth:`FakeBatches.script`; the default completes on the third status retrieval), so tests
decide exactly when it is validating, in progress, completed, expired, failed or
cancelled, and which of its requests fail. Requests inside a batch are answered by the
server's policy, with the same reply bodies and token counts as the chat endpoints.
Results come back in reverse input order, as real providers promise no order.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, urlsplit

from prb_tasks.testing.fake_server import json_body

if TYPE_CHECKING:  # pragma: no cover
    from prb_tasks.testing.fake_server import FakeLLMServer

__all__ = ["ANTHROPIC_MAX_REQUESTS", "OPENAI_MAX_REQUESTS", "BatchScript", "FakeBatches"]

OPENAI_MAX_REQUESTS = 50_000
ANTHROPIC_MAX_REQUESTS = 100_000
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ERROR_KINDS = frozenset({"429", "500", "503", "400", "401", "404"})

_OPENAI_FILES = re.compile(r"(?:/v1)?/files(?:/(?P<id>[^/]+)(?P<content>/content)?)?")
_OPENAI_BATCHES = re.compile(r"(?:/v1)?/batches(?:/(?P<id>[^/]+)(?P<cancel>/cancel)?)?")
_ANTHROPIC_BATCHES = re.compile(r"/v1/messages/batches(?:/(?P<id>[^/]+)(?P<tail>/results|/cancel)?)?")


@dataclass(frozen=True)
class BatchScript:
    """How one batch created on the fake server behaves.

    Attributes:
        polls: status retrievals that still show the batch working (OpenAI: the first
            one ``validating``, later ones ``in_progress``; Anthropic: ``in_progress``);
            the retrieval after them shows it ended.
        end: ``completed``; ``expired`` (only the first ``answered`` requests ran);
            ``failed`` (OpenAI only: the input file was rejected, nothing ran).
        answered: with ``expired``, or when the batch is cancelled: how many requests,
            in input order, were answered before it stopped (default: half, rounded down).
        errors: input position (0-based) -> fault kind for requests that fail inside
            the batch: an HTTP status (``500``, ``429``, ``400``, ...) or ``empty`` /
            ``refusal`` for such replies.
        lose_create_reply: create the batch but drop the connection instead of
            answering, as a timeout on a real provider would look.
    """

    polls: int = 2
    end: Literal["completed", "expired", "failed"] = "completed"
    answered: int | None = None
    errors: Mapping[int, str] = field(default_factory=dict)
    lose_create_reply: bool = False


@dataclass
class _Batch:
    id: str
    api: str
    created: float
    script: BatchScript
    requests: list[tuple[str, dict[str, Any]]]
    input_file_id: str | None = None
    metadata: dict[str, Any] | None = None
    invalid: str | None = None
    polls: int = 0
    cancel_at: float | None = None
    end: str | None = None
    ended_at: float | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)


def _rfc3339(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class FakeBatches:
    """Batch endpoints of one fake server, with scripted state changes and counters.

    Args:
        owner: the server whose policy answers the requests inside batches.
    """

    def __init__(self, owner: FakeLLMServer) -> None:
        self._owner = owner
        self._lock = threading.Lock()
        # Serializes status changes, so two concurrent retrievals finish a batch once.
        self._advance_lock = threading.Lock()
        self._files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self._batches: dict[str, _Batch] = {}
        self._scripts: list[BatchScript] = []
        self._http_faults: list[str | None] = []
        self._serial = itertools.count(1)
        self._stats: Counter[str] = Counter()
        self._submitted: Counter[str] = Counter()
        self.bodies: list[tuple[str, str, dict[str, Any]]] = []

    # -- test controls

    def script(self, *scripts: BatchScript) -> None:
        """Queue behaviours for the next batches created, in creation order."""
        with self._lock:
            self._scripts.extend(scripts)

    def push_http_faults(self, kinds: list[str | None]) -> None:
        """Answer the next batch-API HTTP requests with these errors (``None``: no fault).

        Args:
            kinds: HTTP statuses such as ``500`` or ``429``, in order.
        """
        unknown = {k for k in kinds if k is not None} - _ERROR_KINDS
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}")
        with self._lock:
            self._http_faults.extend(kinds)

    def stats(self) -> dict[str, Any]:
        """Counters: ``files``, ``created`` (batches), ``requests`` (lines in created
        batches), ``answered`` (requests run by the policy), ``polls``, ``downloads``,
        ``cancels``, ``lost_replies``, ``faults``, ``duplicates`` (custom ids submitted
        more than once across batches)."""
        with self._lock:
            out = dict(self._stats)
            out["duplicates"] = sum(1 for n in self._submitted.values() if n > 1)
            return out

    def submitted_ids(self) -> Counter[str]:
        """How many times each custom id was submitted, over all batches."""
        with self._lock:
            return Counter(self._submitted)

    def states(self) -> dict[str, str]:
        """Batch id -> ended state (or ``running``)."""
        with self._lock:
            return {b.id: b.end or ("cancelling" if b.cancel_at else "running") for b in self._batches.values()}

    def reset_stats(self) -> None:
        """Clear the counters (batches and files stay)."""
        with self._lock:
            self._stats.clear()
            self._submitted.clear()
            self.bodies.clear()

    def finish_all(self) -> None:
        """Let every running batch end at its next retrieval."""
        with self._lock:
            for batch in self._batches.values():
                batch.script = BatchScript(
                    polls=0, end=batch.script.end, answered=batch.script.answered, errors=batch.script.errors
                )

    # -- routing

    def handle(self, handler: Any, method: str, path: str, raw: bytes) -> bool:
        """Serve ``path`` if it is a batch route; return False otherwise."""
        api = None
        for pattern, name in ((_ANTHROPIC_BATCHES, "anthropic"), (_OPENAI_FILES, "files"), (_OPENAI_BATCHES, "openai")):
            match = pattern.fullmatch(path)
            if match:
                api = name
                break
        if api is None or match is None:
            return False
        with self._lock:
            fault = self._http_faults.pop(0) if self._http_faults else None
        if fault is not None:
            from prb_tasks.testing.fake_server import _error_body

            self._count("faults")
            status, payload = _error_body("anthropic" if api == "anthropic" else "openai", fault, "")
            extra = {"Retry-After": "0.01"} if fault == "429" else None
            handler._send_json(status, payload, headers=extra)
            return True
        query = {k: v[-1] for k, v in parse_qs(urlsplit(handler.path).query).items()}
        groups = match.groupdict()
        if api == "files":
            self._files_route(handler, method, groups, raw)
        elif api == "openai":
            self._openai_route(handler, method, groups, raw, query)
        else:
            self._anthropic_route(handler, method, groups, raw, query)
        return True

    # -- helpers

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._stats[key] += n

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._serial):06d}"

    @staticmethod
    def _not_found(handler: Any, api: str, what: str) -> None:
        if api == "anthropic":
            handler._send_json(404, {"type": "error",
                                     "error": {"type": "not_found_error", "message": f"{what} not found"}})
        else:
            handler._send_json(404, {"error": {"message": f"No such {what}", "type": "invalid_request_error",
                                               "param": None, "code": None}})

    @staticmethod
    def _bad_request(handler: Any, api: str, message: str) -> None:
        if api == "anthropic":
            handler._send_json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        else:
            handler._send_json(400, {"error": {"message": message, "type": "invalid_request_error",
                                               "param": None, "code": None}})

    def _next_script(self) -> BatchScript:
        with self._lock:
            return self._scripts.pop(0) if self._scripts else BatchScript()

    def _register(self, batch: _Batch) -> None:
        with self._lock:
            self._batches[batch.id] = batch
            self._stats["created"] += 1
            self._stats["requests"] += len(batch.requests)
            for custom_id, body in batch.requests:
                self._submitted[custom_id] += 1
                if self._owner.record_requests:
                    self.bodies.append((batch.api, custom_id, body))

    # -- OpenAI files

    def _files_route(self, handler: Any, method: str, groups: dict[str, Any], raw: bytes) -> None:
        file_id = groups.get("id")
        if method == "POST" and file_id is None:
            fields = self._multipart(handler.headers.get("Content-Type", ""), raw)
            data = fields.get("file")
            purpose = fields.get("purpose", b"").decode()
            if data is None or purpose != "batch":
                self._bad_request(handler, "openai", "expected multipart fields 'file' and purpose=batch")
                return
            meta: dict[str, Any] = {"id": self._new_id("file-fake"), "object": "file", "bytes": len(data[1]),
                    "created_at": int(time.time()), "filename": data[0] or "upload.jsonl", "purpose": "batch",
                    "status": "processed", "expires_at": None, "status_details": None}
            with self._lock:
                self._files[meta["id"]] = (meta, data[1])
            self._count("files")
            handler._send_json(200, meta)
            return
        if method == "GET" and file_id is not None:
            with self._lock:
                stored = self._files.get(file_id)
            if stored is None:
                self._not_found(handler, "openai", f"file {file_id}")
                return
            if groups.get("content"):
                self._count("downloads")
                handler._send(200, stored[1], content_type="application/octet-stream")
            else:
                handler._send_json(200, stored[0])
            return
        self._not_found(handler, "openai", f"route {method} {handler.path}")

    @staticmethod
    def _multipart(content_type: str, raw: bytes) -> dict[str, Any]:
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
        )
        fields: dict[str, Any] = {}
        if not message.is_multipart():
            return fields
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if name == "file":
                fields["file"] = (part.get_filename(), payload)
            elif isinstance(name, str):
                fields[name] = payload
        return fields

    # -- OpenAI batches

    def _openai_route(self, handler: Any, method: str, groups: dict[str, Any], raw: bytes,
                      query: dict[str, str]) -> None:
        batch_id = groups.get("id")
        if method == "POST" and batch_id is None:
            self._openai_create(handler, raw)
        elif method == "GET" and batch_id is None:
            self._list(handler, "openai", query.get("after"), int(query.get("limit", 20)))
        elif method == "GET":
            batch = self._get(batch_id)
            if batch is None or batch.api != "openai":
                self._not_found(handler, "openai", f"batch {batch_id}")
                return
            self._count("polls")
            self._advance(batch)
            handler._send_json(200, self._openai_view(batch))
        elif method == "POST" and groups.get("cancel"):
            batch = self._get(batch_id)
            if batch is None or batch.api != "openai":
                self._not_found(handler, "openai", f"batch {batch_id}")
                return
            self._cancel(batch)
            handler._send_json(200, self._openai_view(batch))
        else:
            self._not_found(handler, "openai", f"route {method} {handler.path}")

    def _openai_create(self, handler: Any, raw: bytes) -> None:
        body = json_body(raw)
        if not isinstance(body, dict):
            self._bad_request(handler, "openai", "request body is not a JSON object")
            return
        endpoint = body.get("endpoint")
        if endpoint != "/v1/chat/completions" or body.get("completion_window") != "24h":
            self._bad_request(handler, "openai", "endpoint must be /v1/chat/completions and completion_window 24h")
            return
        with self._lock:
            stored = self._files.get(str(body.get("input_file_id")))
        if stored is None:
            self._not_found(handler, "openai", f"file {body.get('input_file_id')}")
            return
        requests, invalid = self._parse_openai_file(stored[1], endpoint)
        batch = _Batch(id=self._new_id("batch_fake"), api="openai", created=time.time(), script=self._next_script(),
                       requests=requests, input_file_id=stored[0]["id"], metadata=body.get("metadata"),
                       invalid=invalid)
        if batch.script.end == "failed" and batch.invalid is None:
            batch.invalid = "the input file was rejected (scripted failure)"
        self._register(batch)
        if batch.script.lose_create_reply:
            self._count("lost_replies")
            handler.close_connection = True
            return
        handler._send_json(200, self._openai_view(batch))

    @staticmethod
    def _parse_openai_file(data: bytes, endpoint: str) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
        requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        models: set[str] = set()
        problem = None
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                problem = problem or f"line {number} is not JSON"
                continue
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            body = item.get("body") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not isinstance(body, dict):
                problem = problem or f"line {number} needs custom_id and body"
                continue
            if item.get("method") != "POST" or item.get("url") != endpoint:
                problem = problem or f"line {number}: method must be POST and url {endpoint}"
            if custom_id in seen:
                problem = problem or f"line {number}: duplicate custom_id {custom_id}"
            seen.add(custom_id)
            models.add(str(body.get("model")))
            requests.append((custom_id, body))
        if len(models) > 1:
            problem = problem or "all requests in a batch must use the same model"
        if len(requests) > OPENAI_MAX_REQUESTS:
            problem = problem or f"a batch holds at most {OPENAI_MAX_REQUESTS} requests"
        if not requests:
            problem = problem or "the input file holds no requests"
        return requests, problem

    def _openai_view(self, b: _Batch) -> dict[str, Any]:
        with self._lock:
            if b.end is None:
                status = "cancelling" if b.cancel_at else ("validating" if b.polls <= 1 else "in_progress")
            else:
                status = b.end
            total = 0 if status in ("validating", "failed") else len(b.requests)
            counts = {"total": total, "completed": b.counts.get("completed", 0), "failed": b.counts.get("failed", 0)}
            return {
                "id": b.id, "object": "batch", "endpoint": "/v1/chat/completions",
                "errors": ({"object": "list", "data": [{"code": "invalid_request", "message": b.invalid,
                                                        "param": None, "line": None}]}
                           if b.end == "failed" else None),
                "input_file_id": b.input_file_id, "completion_window": "24h", "status": status,
                "output_file_id": b.output_file_id, "error_file_id": b.error_file_id,
                "created_at": int(b.created), "in_progress_at": int(b.created) if b.polls > 1 else None,
                "expires_at": int(b.created) + 86400, "finalizing_at": None,
                "completed_at": int(b.ended_at) if b.end == "completed" and b.ended_at else None,
                "failed_at": int(b.ended_at) if b.end == "failed" and b.ended_at else None,
                "expired_at": int(b.ended_at) if b.end == "expired" and b.ended_at else None,
                "cancelling_at": int(b.cancel_at) if b.cancel_at else None,
                "cancelled_at": int(b.ended_at) if b.end == "cancelled" and b.ended_at else None,
                "request_counts": counts, "metadata": b.metadata,
            }

    # -- Anthropic message batches

    def _anthropic_route(self, handler: Any, method: str, groups: dict[str, Any], raw: bytes,
                         query: dict[str, str]) -> None:
        batch_id = groups.get("id")
        tail = groups.get("tail")
        if method == "POST" and batch_id is None:
            self._anthropic_create(handler, raw)
            return
        if method == "GET" and batch_id is None:
            self._list(handler, "anthropic", query.get("after_id"), int(query.get("limit", 20)))
            return
        batch = self._get(batch_id)
        if batch is None or batch.api != "anthropic":
            self._not_found(handler, "anthropic", f"message batch {batch_id}")
            return
        if method == "GET" and tail is None:
            self._count("polls")
            self._advance(batch)
            handler._send_json(200, self._anthropic_view(batch, handler))
        elif method == "GET" and tail == "/results":
            if batch.end is None:
                self._bad_request(handler, "anthropic", f"message batch {batch.id} has not ended yet")
                return
            self._count("downloads")
            data = "".join(json.dumps(line) + "\n" for line in batch.lines).encode()
            handler._send(200, data, content_type="application/binary")
        elif method == "POST" and tail == "/cancel":
            self._cancel(batch)
            handler._send_json(200, self._anthropic_view(batch, handler))
        else:
            self._not_found(handler, "anthropic", f"route {method} {handler.path}")

    def _anthropic_create(self, handler: Any, raw: bytes) -> None:
        body = json_body(raw)
        items = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(items, list) or not items:
            self._bad_request(handler, "anthropic", "requests: a non-empty list is required")
            return
        if len(items) > ANTHROPIC_MAX_REQUESTS:
            self._bad_request(handler, "anthropic", f"a batch holds at most {ANTHROPIC_MAX_REQUESTS} requests")
            return
        requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for index, item in enumerate(items):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            params = item.get("params") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                self._bad_request(handler, "anthropic",
                                  f"requests.{index}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$")
                return
            if custom_id in seen:
                self._bad_request(handler, "anthropic", f"requests.{index}.custom_id: duplicate {custom_id}")
                return
            if not isinstance(params, dict) or not params.get("model") \
                    or not isinstance(params.get("max_tokens"), int) \
                    or not isinstance(params.get("messages"), list):
                self._bad_request(handler, "anthropic",
                                  f"requests.{index}.params: model, max_tokens and messages are required")
                return
            seen.add(custom_id)
            requests.append((custom_id, params))
        script = self._next_script()
        batch = _Batch(id=self._new_id("msgbatch_fake"), api="anthropic", created=time.time(), script=script,
                       requests=requests)
        self._register(batch)
        if script.lose_create_reply:
            self._count("lost_replies")
            handler.close_connection = True
            return
        handler._send_json(200, self._anthropic_view(batch, handler))

    def _anthropic_view(self, b: _Batch, handler: Any) -> dict[str, Any]:
        with self._lock:
            ended = b.end is not None
            counts = {
                "processing": 0 if ended else len(b.requests),
                "succeeded": b.counts.get("succeeded", 0),
                "errored": b.counts.get("errored", 0),
                "canceled": b.counts.get("canceled", 0),
                "expired": b.counts.get("expired", 0),
            }
            base = self._owner.url
            return {
                "id": b.id, "type": "message_batch",
                "processing_status": "ended" if ended else ("canceling" if b.cancel_at else "in_progress"),
                "request_counts": counts, "ended_at": _rfc3339(b.ended_at), "created_at": _rfc3339(b.created),
                "expires_at": _rfc3339(b.created + 86400), "archived_at": None,
                "cancel_initiated_at": _rfc3339(b.cancel_at),
                "results_url": f"{base}/v1/messages/batches/{b.id}/results" if ended else None,
            }

    # -- shared state machine

    def _get(self, batch_id: str | None) -> _Batch | None:
        with self._lock:
            return self._batches.get(batch_id or "")

    def _list(self, handler: Any, api: str, after: str | None, limit: int) -> None:
        with self._lock:
            batches = sorted((b for b in self._batches.values() if b.api == api), key=lambda b: b.id, reverse=True)
        if after:
            ids = [b.id for b in batches]
            batches = batches[ids.index(after) + 1:] if after in ids else []
        page = batches[: max(1, min(limit, 100))]
        views = [self._openai_view(b) if api == "openai" else self._anthropic_view(b, handler) for b in page]
        payload: dict[str, Any] = {"data": views, "has_more": len(batches) > len(page),
                                   "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None}
        if api == "openai":
            payload["object"] = "list"
        handler._send_json(200, payload)

    def _cancel(self, batch: _Batch) -> None:
        self._count("cancels")
        with self._lock:
            if batch.end is None and batch.cancel_at is None:
                batch.cancel_at = time.time()

    def _advance(self, batch: _Batch) -> None:
        with self._advance_lock:
            with self._lock:
                if batch.end is not None:
                    return
                batch.polls += 1
                if batch.cancel_at is not None:
                    end = "cancelled"
                elif batch.polls > batch.script.polls:
                    end = "failed" if batch.invalid else batch.script.end
                else:
                    return
            self._finish(batch, end)

    def _finish(self, batch: _Batch, end: str) -> None:
        """Run the batch's requests (as far as ``end`` allows) and write its results."""
        from prb_tasks.testing.fake_server import (
            REFUSAL_TEXT,
            PolicyMiss,
            _anthropic_reply,
            _error_body,
            _normalize,
            _openai_reply,
        )

        owner = self._owner
        if end == "failed" and batch.api == "anthropic":
            end = "completed"
        if end == "failed":
            with self._lock:
                batch.end, batch.ended_at = end, time.time()
            return
        answered = len(batch.requests) if end == "completed" else (
            batch.script.answered if batch.script.answered is not None else len(batch.requests) // 2
        )
        lines: list[dict[str, Any]] = []
        counts: Counter[str] = Counter()
        for position, (custom_id, body) in enumerate(batch.requests):
            serial = next(self._serial)
            model = str(body.get("model", ""))
            if position >= answered:
                kind = "expired" if end == "expired" else "cancelled"
                if batch.api == "anthropic":
                    lines.append({"custom_id": custom_id,
                                  "result": {"type": "expired" if kind == "expired" else "canceled"}})
                    counts["expired" if kind == "expired" else "canceled"] += 1
                else:
                    code = "batch_expired" if kind == "expired" else "batch_cancelled"
                    lines.append({"id": f"batch_req_{serial:06d}", "custom_id": custom_id, "response": None,
                                  "error": {"code": code, "message": f"This request was not run: the batch {kind}."}})
                    counts["failed"] += 1
                continue
            fault = batch.script.errors.get(position)
            if fault in _ERROR_KINDS:
                status, payload = _error_body(batch.api, fault, model)
                if batch.api == "anthropic":
                    lines.append({"custom_id": custom_id, "result": {"type": "errored", "error": payload}})
                    counts["errored"] += 1
                else:
                    lines.append({"id": f"batch_req_{serial:06d}", "custom_id": custom_id,
                                  "response": {"status_code": status, "request_id": f"req_fake{serial:06d}",
                                               "body": payload}, "error": None})
                    counts["failed"] += 1
                continue
            messages = _normalize(batch.api, body)
            if fault == "empty":
                text: str = ""
            elif fault == "refusal":
                text = REFUSAL_TEXT
            else:
                text = owner.policy(messages, model)
                owner._count("successes")
                if isinstance(text, PolicyMiss):
                    owner._count("policy_misses")
            text = str(text)
            prompt_tokens = owner._prompt_tokens(messages, model)
            self._count("answered")
            if batch.api == "anthropic":
                message = _anthropic_reply(model, text, prompt_tokens, serial)
                if fault == "refusal":
                    message["stop_reason"] = "refusal"
                lines.append({"custom_id": custom_id, "result": {"type": "succeeded", "message": message}})
                counts["succeeded"] += 1
            else:
                reply = _openai_reply(model, text, prompt_tokens, fault == "refusal", serial)
                lines.append({"id": f"batch_req_{serial:06d}", "custom_id": custom_id,
                              "response": {"status_code": 200, "request_id": f"req_fake{serial:06d}", "body": reply},
                              "error": None})
                counts["completed"] += 1
        lines.reverse()
        with self._lock:
            batch.lines = lines
            batch.counts = dict(counts)
            batch.end, batch.ended_at = end, time.time()
            if batch.api == "openai":
                ok = [line for line in lines if line.get("response") and line["response"].get("status_code") == 200]
                bad = [line for line in lines if line not in ok]
                for kind, chosen in (("output", ok), ("error", bad)):
                    if not chosen:
                        continue
                    file_id = self._new_id("file-fake")
                    data = "".join(json.dumps(line) + "\n" for line in chosen).encode()
                    self._files[file_id] = ({"id": file_id, "object": "file", "bytes": len(data),
                                             "created_at": int(time.time()), "filename": f"batch_{kind}.jsonl",
                                             "purpose": "batch_output", "status": "processed"}, data)
                    if kind == "output":
                        batch.output_file_id = file_id
                    else:
                        batch.error_file_id = file_id

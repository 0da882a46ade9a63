"""A local fake LLM judge server speaking the OpenAI, Anthropic and Ollama wire formats.

The judge tasks talk to real providers through ``litellm``. To test them offline
(and to rehearse failure handling) this module serves the same HTTP endpoints
on ``127.0.0.1``, answers with verdict text chosen by a *policy*, and can inject
the faults real providers produce (rate limits, 5xx, hangs, dropped sockets,
broken JSON, empty or refused answers).

Endpoints (all non-streaming unless noted):

* OpenAI chat completions: ``POST /v1/chat/completions`` and ``POST /chat/completions``;
  ``GET /v1/models``. Use litellm model ``openai/<name>`` with
  ``api_base=server.openai_base`` (``http://127.0.0.1:PORT/v1``).
* Anthropic messages: ``POST /v1/messages``. Use ``anthropic/<name>`` with
  ``api_base=server.url`` -- litellm appends ``/v1/messages`` itself, so an
  ``api_base`` ending in ``/v1`` would post to ``/v1/v1/messages`` (answered
  with a 404 that says so).
* Ollama chat: ``POST /api/chat`` (``stream: true`` answered with NDJSON);
  ``GET /api/tags``. Use ``ollama_chat/<name>`` with ``api_base=server.url``.
* Batch APIs: OpenAI files + batches and Anthropic message batches, with scripted
  state changes (see :mod:`prb_tasks.testing.fake_batches`; ``server.batches``).
* Control: ``GET /_stats`` returns :meth:`FakeLLMServer.stats` as JSON,
  ``POST /_reset`` clears it.

Rehearsing hostile or failing servers: ``echo_credentials`` puts the credentials each
request carried (``Authorization``, ``x-api-key``, ``api-key``, ``x-goog-api-key``,
``?key=``) into every error body and reply, as careless servers do; ``die_after=N``
stops listening after N answers (a crashed server: later connections are refused);
``max_parallel=N`` works on at most N chat requests at a time and queues the rest (a
CPU llama.cpp server answers one at a time); ``freeze_after=N`` (or :meth:`FakeLLMServer.freeze`)
keeps accepting connections and reading requests after N requests but answers nothing
until :meth:`FakeLLMServer.thaw` (a hung server: clients wait for their timeouts); the
``quota`` fault is OpenAI's 429 ``insufficient_quota``, and a long ``retry_after`` a
daily limit. Hostile replies: ``huge`` answers 200 with a body of ``huge_bytes`` (no
Content-Length, streamed), ``deep`` with JSON nested ``deep_levels`` deep, and
``trickle`` sends a 200's headers and then one byte of white space every
``trickle_seconds`` for ever (the reply never ends; the client must give up).

Library use::

    with FakeLLMServer(policy=always("A"), faults={"429": 0.1}, seed=0) as srv:
        litellm.completion(model="openai/fake", api_base=srv.openai_base, ...)
        assert srv.stats()["successes"] >= 1

Command line (prints ``READY http://127.0.0.1:PORT`` once listening)::

    python -m prb_tasks.testing.fake_server --port 0 --policy chosen \
        --chosen-file data.jsonl --latency 0.05 --fault 429=0.3 --seed 0
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FAULT_KINDS",
    "REFUSAL_TEXT",
    "FakeLLMServer",
    "Message",
    "Policy",
    "PolicyMiss",
    "always",
    "best_of_n",
    "empty",
    "garbage",
    "policy_from_name",
    "prefer_texts",
    "scripted",
]

Message = dict[str, str]
"""A normalized chat message: ``{"role": ..., "content": <plain text>}``."""

Policy = Callable[[list[Message], str], str]
"""Maps ``(normalized messages, requested model name)`` to the reply text."""

REFUSAL_TEXT = "I'm sorry, but I can't help with that."

FAULT_KINDS: frozenset[str] = frozenset(
    {"429", "500", "503", "timeout", "drop", "malformed", "empty", "refusal", "401", "400", "404", "quota",
     "huge", "deep", "trickle"}
)

_ERROR_FAULTS = frozenset({"429", "500", "503", "401", "400", "404", "quota"})


# --------------------------------------------------------------------------- policies


class PolicyMiss(str):
    """Reply text produced when a policy could not decide and had to guess.

    Subclassing ``str`` keeps the policy signature a plain ``-> str`` while still
    letting the server tell guesses apart, so they show up as ``policy_misses``
    in the stats instead of silently inflating agreement numbers.
    """


def json_body(raw: bytes) -> Any:
    """A request body as JSON, or None when it is empty or not JSON (the fakes answer that themselves)."""
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return None


def _verdict(letter: str) -> str:
    return f"The answer fits.\nResult: {letter}"


def always(letter: str) -> Policy:
    """Build a policy that always prefers the same response.

    Args:
        letter: The verdict letter to emit, e.g. ``"A"`` or ``"B"``.

    Returns:
        A policy replying ``"The answer fits.\\nResult: <letter>"``.
    """
    text = _verdict(letter)

    def policy(messages: list[Message], model: str) -> str:
        return text

    return policy


def garbage() -> Policy:
    """Build a policy whose replies contain no parseable verdict."""

    def policy(messages: list[Message], model: str) -> str:
        return "I cannot decide between these two."

    return policy


def empty() -> Policy:
    """Build a policy that always replies with an empty string."""

    def policy(messages: list[Message], model: str) -> str:
        return ""

    return policy


def best_of_n() -> Policy:
    """Build a policy that plays every role of the Best-of-N pipeline offline.

    A rubric-grading prompt (``Aspect 1: ...`` lines) gets ``Aspect i: G`` lines, a
    pointwise prompt (``Score: N``) a score, a pair a verdict: each a hash of the
    prompt and the model name, so different models disagree but every answer is
    reproducible. Anything else (a policy's prompt) gets a short numbered answer, so
    repeats of one question differ.
    """
    import hashlib

    counter = itertools.count()
    lock = threading.Lock()

    def policy(messages: list[Message], model: str) -> str:
        prompt = _last_user_text(messages)
        digest = int(hashlib.sha256(f"{model}\n{prompt}".encode("utf-8")).hexdigest()[:8], 16)
        aspects = len(re.findall(r"^Aspect \d+:", prompt, re.M))
        if aspects:
            return "\n".join(f"Aspect {i}: {(digest >> i) % 3}" for i in range(1, aspects + 1))
        if "Score: N" in prompt:
            return f"Score: {1 + digest % 10}"
        if "Result: A" in prompt:
            return _verdict("AB"[digest % 2])
        with lock:
            serial = next(counter)
        return f"Answer {serial}: " + " ".join(["a practical suggestion"] * (1 + digest % 6)) + "."

    return policy


def scripted(texts: Sequence[str]) -> Policy:
    """Build a policy that replies with the given texts in order, cycling forever.

    Args:
        texts: Replies to hand out one per request; after the last one the
            sequence starts over. Must not be empty.

    Returns:
        A thread-safe policy (concurrent requests each get the next text).
    """
    if not texts:
        raise ValueError("scripted() needs at least one text")
    cycle = itertools.cycle(list(texts))
    lock = threading.Lock()

    def policy(messages: list[Message], model: str) -> str:
        with lock:
            return next(cycle)

    return policy


# Headings that introduce the two candidate responses in judge prompts, e.g.
# "Response A:", "[The Start of Assistant A's Answer]", "Output (B)". The label
# itself is matched case-sensitively so prose such as "answer a question"
# does not count as a heading.
_LABEL_RE = re.compile(
    r"(?i:response|answer|assistant|output|completion|candidate)\s*[(\[#]?\s*(?P<label>[AB12])(?![A-Za-z0-9])"
)
# A heading farther away than this from the text it supposedly introduces is
# more likely part of the instructions ("compare Response A and Response B").
_MAX_HEADING_GAP = 120
_OPENERS = "\n:]>\"'`*"
_CLOSERS = "\n[<\"'`*"


def _last_user_text(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message.get("content", "")
    return "\n".join(m.get("content", "") for m in messages)


def _occurrences(haystack: str, needle: str) -> list[int]:
    starts: list[int] = []
    pos = haystack.find(needle)
    while pos != -1:
        starts.append(pos)
        pos = haystack.find(needle, pos + 1)
    return starts


def _alignment(haystack: str, start: int, end: int) -> int:
    """Score how much ``haystack[start:end]`` looks like a whole response block.

    Matters when one response contains the other ("Yes" vs "Yes, because..."):
    the occurrence standing alone on its lines is the real response.
    """
    before = haystack[:start].rstrip(" \t")
    after = haystack[end:].lstrip(" \t")
    score = 0
    if not before or before[-1] in _OPENERS:
        score += 1
    if not after or after[0] in _CLOSERS:
        score += 1
    return score


def _best_span(
    haystack: str, texts: Iterable[str], avoid: tuple[int, int] | None = None
) -> tuple[int, int] | None:
    best: tuple[int, int, int, int] | None = None  # (alignment, length, -start, start)
    for text in texts:
        for start in _occurrences(haystack, text):
            end = start + len(text)
            if avoid is not None and start < avoid[1] and avoid[0] < end:
                continue
            key = (_alignment(haystack, start, end), len(text), -start, start)
            if best is None or key > best:
                best = key
    if best is None:
        return None
    start = best[3]
    length = best[1]
    return start, start + length


def _heading_label(haystack: str, start: int) -> str | None:
    last: re.Match[str] | None = None
    for match in _LABEL_RE.finditer(haystack, 0, start):
        last = match
    if last is None or start - last.end() > _MAX_HEADING_GAP:
        return None
    return "A" if last.group("label") in "A1" else "B"


def _clean_texts(texts: Iterable[str] | None) -> list[str]:
    if texts is None:
        return []
    # Longest first so that, on equal alignment, the most specific text wins.
    return sorted({t.strip() for t in texts if t and t.strip()}, key=len, reverse=True)


def prefer_texts(chosen_texts: Iterable[str], rejected_texts: Iterable[str] | None = None) -> Policy:
    """Build a policy that votes for whichever displayed response is a known "chosen" text.

    The last user message is searched for the known texts. The position of the
    chosen response is then decided, most reliable first, by (1) comparing it with
    the position of a known rejected text, (2) the nearest preceding
    ``Response A``/``Response B``-style heading, (3) whether it sits in the first or
    second half of the prompt. If no chosen text occurs at all, or only rule (3)
    applied, the reply is a :class:`PolicyMiss` (counted as ``policy_misses``); a
    miss with no chosen text answers ``Result: A``.

    Args:
        chosen_texts: Texts of the preferred responses (e.g. the ``chosen`` field of
            every example in the dataset); surrounding whitespace is ignored.
        rejected_texts: Optional texts of the dispreferred responses; when given they
            pin down the order exactly instead of relying on headings.

    Returns:
        A policy replying ``"...\\nResult: A"`` when the chosen text is the first of
        the two responses shown and ``"...\\nResult: B"`` otherwise.
    """
    chosen = _clean_texts(chosen_texts)
    rejected = _clean_texts(rejected_texts)

    def policy(messages: list[Message], model: str) -> str:
        prompt = _last_user_text(messages)
        span = _best_span(prompt, chosen)
        if span is None:
            return PolicyMiss(_verdict("A"))
        other = _best_span(prompt, rejected, avoid=span) if rejected else None
        if other is not None:
            return _verdict("A" if span[0] < other[0] else "B")
        label = _heading_label(prompt, span[0])
        if label is not None:
            return _verdict(label)
        middle = (span[0] + span[1]) / 2
        return PolicyMiss(_verdict("A" if middle < len(prompt) / 2 else "B"))

    return policy


def policy_from_name(
    name: str,
    data_texts: Iterable[str] | None = None,
    rejected_texts: Iterable[str] | None = None,
) -> Policy:
    """Resolve a policy by its command-line name.

    Args:
        name: One of ``"A"``, ``"B"`` (always that verdict), ``"garbage"`` (no
            verdict), ``"chosen"`` (:func:`prefer_texts`) or ``"empty"`` (empty
            replies). Case-insensitive.
        data_texts: Chosen texts for the ``"chosen"`` policy; required for it.
        rejected_texts: Optional rejected texts for the ``"chosen"`` policy.

    Returns:
        The policy callable.
    """
    key = name.strip().lower()
    if key in ("a", "b"):
        return always(key.upper())
    if key == "garbage":
        return garbage()
    if key == "empty":
        return empty()
    if key == "bon":
        return best_of_n()
    if key == "chosen":
        if data_texts is None:
            raise ValueError("policy 'chosen' needs data_texts (e.g. --chosen-file)")
        return prefer_texts(data_texts, rejected_texts)
    raise ValueError(f"unknown policy {name!r}; expected A, B, garbage, chosen, empty or bon")


# --------------------------------------------------------------------------- wire formats


def _text_of(content: Any, joiner: str = "\n") -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return joiner.join(parts)
    return str(content)


def _normalize(api: str, body: dict[str, Any]) -> list[Message]:
    messages: list[Message] = []
    if api == "anthropic" and body.get("system") is not None:
        messages.append({"role": "system", "content": _text_of(body["system"])})
    for raw in body.get("messages") or []:
        if isinstance(raw, dict):
            messages.append({"role": str(raw.get("role", "user")), "content": _text_of(raw.get("content"))})
    return messages


def _count_tokens(text: str) -> int:
    # Whitespace words are a deterministic stand-in for a tokenizer; tests only
    # need the counts to be present and plausible.
    return len(text.split())


def _openai_reply(model: str, text: str, prompt_tokens: int, refusal: bool, serial: int) -> dict[str, Any]:
    completion_tokens = _count_tokens(text)
    return {
        "id": f"chatcmpl-fake{serial:08d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": text if refusal else None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _cut_in_reasoning(text: str) -> bool:
    """A reply that ends inside ``<think>``: its token budget went to reasoning (finish reason ``length``)."""
    return text.rfind("<think>") > text.rfind("</think>")


def _anthropic_reply(model: str, text: str, prompt_tokens: int, serial: int) -> dict[str, Any]:
    return {
        "id": f"msg_fake{serial:08d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": _count_tokens(text)},
    }


def _ollama_timestamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ollama_final(model: str, text: str, prompt_tokens: int) -> dict[str, Any]:
    return {
        "model": model,
        "created_at": _ollama_timestamp(),
        "message": {"role": "assistant", "content": text},
        "done": True,
        "done_reason": "stop",
        "total_duration": 1_000_000,
        "load_duration": 1_000,
        "prompt_eval_count": prompt_tokens,
        "prompt_eval_duration": 100_000,
        "eval_count": _count_tokens(text),
        "eval_duration": 500_000,
    }


def _ollama_stream(model: str, text: str, prompt_tokens: int) -> bytes:
    lines = []
    for piece in re.findall(r"\S+\s*|\s+", text):
        chunk = {
            "model": model,
            "created_at": _ollama_timestamp(),
            "message": {"role": "assistant", "content": piece},
            "done": False,
        }
        lines.append(json.dumps(chunk))
    # Ollama's last stream line carries the counters and an empty message.
    final = _ollama_final(model, "", prompt_tokens)
    final["eval_count"] = _count_tokens(text)
    lines.append(json.dumps(final))
    return ("\n".join(lines) + "\n").encode()


_OPENAI_ERRORS: dict[str, tuple[int, str, str, str | None]] = {
    "429": (429, "Rate limit reached for requests (injected by fake server).", "requests", "rate_limit_exceeded"),
    "500": (500, "The server had an error while processing your request.", "server_error", None),
    "503": (503, "The engine is currently overloaded, please try again later.", "server_error", None),
    "401": (401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    "400": (400, "Invalid request (injected by fake server).", "invalid_request_error", None),
    "404": (404, "The model `{model}` does not exist or you do not have access to it.",
            "invalid_request_error", "model_not_found"),
    "quota": (429, "You exceeded your current quota, please check your plan and billing details.",
              "insufficient_quota", "insufficient_quota"),
}

_ANTHROPIC_ERRORS: dict[str, tuple[int, str, str]] = {
    "429": (429, "rate_limit_error", "Number of requests has exceeded your rate limit (injected by fake server)."),
    "500": (500, "api_error", "Internal server error"),
    "503": (503, "overloaded_error", "Overloaded"),
    "401": (401, "authentication_error", "invalid x-api-key"),
    "400": (400, "invalid_request_error", "Invalid request (injected by fake server)."),
    "404": (404, "not_found_error", "model: {model}"),
    "quota": (429, "rate_limit_error", "Your credit balance is too low to access the API (injected quota)."),
}

_OLLAMA_ERRORS: dict[str, tuple[int, str]] = {
    "429": (429, "too many requests (injected by fake server)"),
    "500": (500, "internal server error"),
    "503": (503, "server busy, please try again.  maximum pending requests exceeded"),
    "401": (401, "unauthorized"),
    "400": (400, "invalid request (injected by fake server)"),
    "404": (404, 'model "{model}" not found, try pulling it first'),
    "quota": (429, "quota exceeded (injected by fake server)"),
}


def _error_body(api: str, kind: str, model: str, message: str | None = None) -> tuple[int, dict[str, Any]]:
    """Return ``(status, json_body)`` for an error of ``kind`` in ``api``'s shape.

    ``message`` overrides the canned text (used for errors that are not injected).
    """
    if api == "anthropic":
        status, err_type, text = _ANTHROPIC_ERRORS[kind]
        return status, {"type": "error", "error": {"type": err_type, "message": message or text.format(model=model)}}
    if api == "ollama":
        status, text = _OLLAMA_ERRORS[kind]
        return status, {"error": message or text.format(model=model)}
    status, text, err_type, code = _OPENAI_ERRORS[kind]
    return status, {"error": {"message": message or text.format(model=model), "type": err_type, "param": None,
                              "code": code}}


# Where clients put credentials; ``echo_credentials`` sends these values back.
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")


def _credentials(headers: dict[str, str], path: str) -> list[str]:
    found = [f"{name}: {headers[name]}" for name in _CREDENTIAL_HEADERS if headers.get(name)]
    query = path.split("?", 1)[1] if "?" in path else ""
    found += [f"query {part}" for part in query.split("&") if part.startswith("key=")]
    return found


def _error_message(payload: dict[str, Any]) -> str:
    """The human-readable message inside an error body made by :func:`_error_body`."""
    err = payload.get("error")
    return str(err.get("message", "")) if isinstance(err, dict) else str(err)


_CHAT_ROUTES = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/api/chat": "ollama",
}

# Broken on purpose: a truncated JSON document, as a proxy cutting the body would produce.
_MALFORMED_BODY = b'{"id": "broken", "object": "chat.completion", "choices": [{"message": {"content": "Result: A'


# --------------------------------------------------------------------------- server


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Listen backlog: bursts of 64+ concurrent judge calls must not get refused.
    request_queue_size = 512
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: FakeLLMServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (timeouts, dropped keep-alive sockets) are routine
        # here; anything else is a bug in the fake and must stay visible.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"
    # Headers and body go out in two writes; with Nagle on, the body waits for the
    # client's delayed ACK (~40 ms per reply), which swamps any latency measurement.
    disable_nagle_algorithm = True
    server: _HTTPServer

    # -- connection bookkeeping so close() can unblock idle keep-alive threads

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.owner._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.owner.verbose:
            super().log_message(format, *args)

    # -- low-level I/O

    def _route(self) -> str:
        path = self.path.split("?", 1)[0]
        if len(path) > 1:
            path = path.rstrip("/")
        return path

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    # Trailer section ends with an empty line.
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _hostile(self, fault: str) -> None:
        """A 200 no client should swallow whole: ``huge``, ``deep`` or ``trickle`` (see the module)."""
        owner = self.server.owner
        if fault == "deep":
            levels = owner.deep_levels
            self._send(200, b'{"choices": ' + b"[" * levels + b"]" * levels + b"}")
            return
        self.close_connection = True  # no Content-Length: the body ends when the connection does
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            if fault == "huge":
                chunk = b" " * (1 << 16)
                for _ in range(owner.huge_bytes // len(chunk) + 1):
                    self.wfile.write(chunk)
                return
            sent = 0
            while not owner._closing.wait(owner.trickle_seconds):
                if owner.trickle_limit is not None and sent >= owner.trickle_limit:
                    return  # a test's bound on a hang: the reply ends (as white space, not JSON)
                self.wfile.write(b" ")
                self.wfile.flush()
                sent += 1
        except OSError:  # the client gave up: what the fault is for
            return

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers=headers)

    # -- dispatch

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        owner = self.server.owner
        path = self._route()
        if path != "/_stats":
            owner._count_http()
        if owner.batches.handle(self, "GET", path, b""):
            return
        if path == "/_stats":
            self._send_json(200, owner.stats())
        elif path in ("/v1/models", "/models"):
            self._send_json(200, {
                "object": "list",
                "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in owner.models],
            })
        elif path == "/api/tags":
            self._send_json(200, {"models": [{"name": m, "model": m, "size": 0} for m in owner.models]})
        elif path in ("/", "/health"):
            self._send_json(200, {"status": "ok"})
        else:
            self._send_json(404, {"error": {"message": f"no route for GET {path}", "type": "not_found", "code": None}})

    def do_POST(self) -> None:
        owner = self.server.owner
        path = self._route()
        raw = self._read_body()
        if path == "/_reset":
            owner.reset()
            self._send_json(200, {"ok": True})
            return
        owner._count_http()
        if owner.batches.handle(self, "POST", path, raw):
            return
        api = _CHAT_ROUTES.get(path)
        if api is None:
            hint = ""
            if path.endswith("/v1/v1/messages"):
                hint = " (litellm's anthropic provider appends /v1/messages; pass api_base without /v1)"
            elif path.endswith("/v1/v1/chat/completions"):
                hint = " (api_base already ended in /v1 twice)"
            self._send_json(404, {"error": {"message": self._echo(f"no route for POST {path}{hint}"),
                                            "type": "not_found", "code": None}})
            return
        self._chat(api, path, raw)

    def _echo(self, message: str) -> str:
        """``message``, plus the credentials the request carried when ``echo_credentials`` is on."""
        owner = self.server.owner
        if not owner.echo_credentials:
            return message
        seen = _credentials({k.lower(): v for k, v in self.headers.items()}, self.path)
        return f"{message} (request credentials: {'; '.join(seen) or 'none'})"

    def _chat(self, api: str, path: str, raw: bytes) -> None:
        owner = self.server.owner
        if owner._dead.is_set():
            # Died (``die_after``) but the listener is still closing: answer nothing.
            self.close_connection = True
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        body = json_body(raw)
        owner._record(path, api, headers, body if body is not None else raw.decode("utf-8", "replace"))
        if not isinstance(body, dict):
            status, payload = _error_body(api, "400", "", message="request body is not a JSON object")
            self._send_json(status, payload)
            return
        model = str(body.get("model", ""))
        stream = bool(body.get("stream"))
        if stream and api != "ollama":
            status, payload = _error_body(api, "400", model, message="the fake server does not support streaming")
            self._send_json(status, payload)
            return

        owner._admit()
        while not owner._answering.wait(0.05):
            # Frozen: the request was read; hold the connection open, answer nothing.
            if owner._closing.is_set():
                self.close_connection = True
                return

        fault = owner._next_fault()
        if fault is not None:
            owner._count_fault(fault)
        if fault in _ERROR_FAULTS:
            status, payload = _error_body(api, fault, model)
            if owner.echo_credentials:
                status, payload = _error_body(api, fault, model, message=self._echo(_error_message(payload)))
            extra = {}
            if fault == "429":
                extra = {"Retry-After": f"{owner.retry_after:g}",
                         "retry-after-ms": str(round(owner.retry_after * 1000))}
            self._send_json(status, payload, headers=extra)
            return
        if fault == "drop":
            # Sending nothing and closing is what a crashed upstream or a proxy
            # killing the connection looks like to the client.
            self.close_connection = True
            return
        if fault == "timeout" and owner._closing.wait(owner.hang_seconds):
            # Closing while hung: abandon the request instead of answering late.
            self.close_connection = True
            return

        with owner._working:
            self._answer(api, body, model, stream, fault)
        owner._answered()

    def _answer(self, api: str, body: dict[str, Any], model: str, stream: bool, fault: str | None) -> None:
        owner = self.server.owner
        cache = owner.prompt_cache
        # Read on arrival, written once answered: what a provider's cache would see.
        arrived = (cache.openai_arrived(_normalize(api, body))
                   if cache is not None and cache.after_reply and api == "openai" else None)
        # Event.wait instead of time.sleep so close() is not held up by sleeping handlers.
        if owner.latency > 0:
            owner._closing.wait(owner.latency)
        if owner._dead.is_set():
            self.close_connection = True
            return

        if fault == "malformed":
            self._send(200, _MALFORMED_BODY)
            return
        if fault in ("huge", "deep", "trickle"):
            self._hostile(fault)
            return

        messages = _normalize(api, body)
        if fault == "empty":
            text: str = ""
        elif fault == "refusal":
            text = REFUSAL_TEXT
        else:
            try:
                text = owner.policy(messages, model)
            except Exception as exc:  # noqa: BLE001
                # A broken policy must surface as a visible 500, not as a hung client.
                owner._count("policy_errors")
                status, payload = _error_body(api, "500", model, message=f"policy raised {exc!r}")
                self._send_json(status, payload)
                return
            owner._count("successes")
            if isinstance(text, PolicyMiss):
                owner._count("policy_misses")
        text = self._echo(str(text)) if owner.echo_credentials else str(text)

        prompt_tokens = owner._prompt_tokens(messages, model)
        serial = owner._serial()
        if api == "openai":
            reply = _openai_reply(model, text, prompt_tokens, fault == "refusal", serial)
            if body.get("logprobs") is True and owner.logprobs and fault != "refusal":
                from prb_tasks.testing.fake_logprobs import reply_logprobs

                top = body.get("top_logprobs")
                confidence = owner.confidence(_last_user_text(messages), text)
                reply["choices"][0]["logprobs"] = reply_logprobs(text, top if isinstance(top, int) else 0, confidence)
            if _cut_in_reasoning(text):
                reply["choices"][0]["finish_reason"] = "length"
            if cache is not None:
                if arrived is not None:
                    cache.openai_answered(messages)
                cached = arrived if arrived is not None else cache.openai(messages)
                reply["usage"]["prompt_tokens_details"] = {"cached_tokens": min(prompt_tokens, cached)}
            self._send_json(200, reply, headers={"x-request-id": f"req_fake{serial:08d}"})
        elif api == "anthropic":
            reply = _anthropic_reply(model, text, prompt_tokens, serial)
            if cache is not None:
                read, written = cache.anthropic(body)
                usage = reply["usage"]
                # Anthropic's input_tokens leave out what was read from or written to the cache.
                usage["input_tokens"] = max(0, prompt_tokens - read - written)
                usage["cache_read_input_tokens"] = read
                usage["cache_creation_input_tokens"] = written
            self._send_json(200, reply, headers={"request-id": f"req_fake{serial:08d}"})
        elif stream:
            self._send(200, _ollama_stream(model, text, prompt_tokens), content_type="application/x-ndjson")
        else:
            self._send_json(200, _ollama_final(model, text, prompt_tokens))


class FakeLLMServer:
    """Threaded local HTTP server impersonating OpenAI, Anthropic and Ollama chat APIs.

    The server starts listening in a daemon thread as soon as it is constructed;
    use it as a context manager (or call :meth:`close`) to stop it.

    Attributes:
        policy: The reply policy; may be swapped while the server runs.
        latency: Seconds added before every 200 reply of a chat endpoint.
        retry_after: Value of the ``Retry-After`` header on injected 429s.
        hang_seconds: How long the ``"timeout"`` fault stalls before answering.
        huge_bytes: Body size of the ``"huge"`` fault (default 64 MiB).
        deep_levels: Nesting of the ``"deep"`` fault's JSON (default 100,000).
        trickle_seconds: Pause between the ``"trickle"`` fault's bytes (default 0.2 s).
        models: Model names listed by ``GET /v1/models`` and ``GET /api/tags``.
        verbose: Log requests and unexpected handler errors to stderr.
        echo_credentials: Copy the credentials each request carried into error bodies
            and replies (a careless server; for redaction tests).
        die_after: Stop listening after this many chat replies (None: never).
        freeze_after: Stop answering (but keep accepting) after this many chat requests
            (None: never; 0: frozen from the start).
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        latency: float = 0.0,
        faults: dict[str, float] | None = None,
        seed: int | None = 0,
        fault_script: Iterable[str | None] | None = None,
        retry_after: float = 0.05,
        hang_seconds: float = 30.0,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Sequence[str] = ("fake",),
        record_requests: bool = True,
        verbose: bool = False,
        echo_credentials: bool = False,
        die_after: int | None = None,
        max_parallel: int | None = None,
        token_counter: Callable[[list[Message], str], int] | None = None,
        freeze_after: int | None = None,
        prompt_cache_min: int | None = None,
        prompt_cache_after_reply: bool = False,
        logprobs: bool = True,
        confidence: Callable[[str, str], float] | None = None,
    ) -> None:
        """Bind the socket and start serving.

        Args:
            policy: Chooses the reply text for each successful chat request;
                defaults to ``always("A")``.
            latency: Seconds to wait before every 200 reply (simulates model time).
            faults: Probability per fault kind (keys from :data:`FAULT_KINDS`), e.g.
                ``{"429": 0.3, "500": 0.1}``; one draw per chat request decides
                which fault, if any, applies. Probabilities must sum to at most 1.
            seed: Seed of the random generator used for ``faults``.
            fault_script: Fault kinds (``None`` = no fault) applied to the next chat
                requests in order, before ``faults`` is consulted; makes tests deterministic.
            retry_after: Seconds advertised in ``Retry-After`` (and, in ms, in
                ``retry-after-ms``) on 429 replies; fractions are allowed.
            hang_seconds: Stall of the ``"timeout"`` fault before the reply is sent.
            host: Interface to bind; keep the loopback default.
            port: TCP port; 0 picks a free ephemeral port.
            models: Model names reported by the model-listing endpoints.
            record_requests: Keep every request in :attr:`requests`; turn off for
                long runs to bound memory.
            verbose: Log each request to stderr.
            echo_credentials: Send back the credentials of each request (header values
                and ``?key=``) in error messages and appended to reply texts.
            die_after: After this many chat replies (those past fault injection) the
                server closes, so later connections are refused, as when a server
                process dies.
            max_parallel: Work on at most this many chat requests at a time (the rest
                queue, their ``latency`` running one after another), like a CPU
                llama.cpp server; None: no limit.
            token_counter: Counts the prompt tokens reported in ``usage``, from the
                normalized messages and the requested model name (default: whitespace
                words). Pass a real tokenizer to check token estimates against it.
            freeze_after: After this many chat requests were let through, the server
                freezes: it still accepts connections and reads requests but answers none
                until :meth:`thaw` (a hung server); 0 freezes it from the start; None: never.
            prompt_cache_min: Report prompt-cache reads and writes in ``usage`` the way
                OpenAI (automatic prefix) and Anthropic (``cache_control`` breakpoints) do,
                for prefixes of at least this many tokens
                (:mod:`prb_tasks.testing.fake_prompt_cache`); None: report none.
            prompt_cache_after_reply: OpenAI-style: a prefix is readable only by requests
                arriving after its request was answered (requests sent together all
                miss, as with a real provider); False: at once.
            logprobs: Answer ``logprobs: true`` with log-probabilities in the OpenAI shape
                (:mod:`prb_tasks.testing.fake_logprobs`); False: ignore it, as servers that
                do not support them do.
            confidence: Probability of the verdict letter in those, from ``(prompt, reply)``
                (default: a reproducible hash of the prompt, 0.55 to 0.99).
        """
        self.policy: Policy = policy if policy is not None else always("A")
        self.latency = float(latency)
        self.retry_after = float(retry_after)
        self.hang_seconds = float(hang_seconds)
        self.huge_bytes = 64 * 1024**2
        self.deep_levels = 100_000
        self.trickle_seconds = 0.2
        #: Bytes after which a ``trickle`` ends (None: never), so a client that fails to give up
        #: fails its test instead of hanging it.
        self.trickle_limit: int | None = None
        self.models = list(models)
        self.record_requests = record_requests
        self.verbose = verbose
        self.echo_credentials = echo_credentials
        self.die_after = die_after
        self._working: Any = (
            threading.BoundedSemaphore(max_parallel) if max_parallel else contextlib.nullcontext()
        )
        self._answers = 0
        self._dead = threading.Event()
        self.freeze_after = freeze_after
        self._admitted = 0  # chat requests let through to be answered
        self._answering = threading.Event()  # cleared while frozen
        if freeze_after != 0:
            self._answering.set()
        self.token_counter = token_counter
        from prb_tasks.testing.fake_logprobs import hashed_confidence

        self.logprobs = logprobs
        self.confidence: Callable[[str, str], float] = confidence or hashed_confidence
        from prb_tasks.testing.fake_prompt_cache import FakePromptCache

        self.prompt_cache = (FakePromptCache(prompt_cache_min, after_reply=prompt_cache_after_reply)
                             if prompt_cache_min is not None else None)

        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self._faults: dict[str, float] = {}
        self.set_faults(faults or {})
        self._fault_script: list[str | None] = []
        self.push_faults(fault_script or [])
        self._closing = threading.Event()
        self._closed = False
        self._conns: set[socket.socket] = set()
        self._serial_counter = itertools.count(1)
        self._init_stats()
        from prb_tasks.testing.fake_batches import FakeBatches

        self.batches = FakeBatches(self)

        self._httpd = _HTTPServer((host, port), self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            # shutdown() waits for the loop's next poll, so a short poll keeps close()
            # (run once per test) from dominating test time.
            kwargs={"poll_interval": 0.02},
            name=f"FakeLLMServer:{self.port}",
            daemon=True,
        )
        self._thread.start()

    # -- addresses

    @property
    def port(self) -> int:
        """The TCP port actually bound."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL without path, e.g. ``http://127.0.0.1:PORT`` (Anthropic and Ollama ``api_base``)."""
        host = self._httpd.server_address[0]
        if isinstance(host, bytes):
            host = host.decode()
        return f"http://{host}:{self.port}"

    @property
    def openai_base(self) -> str:
        """``api_base`` for litellm ``openai/<model>``: :attr:`url` + ``/v1``."""
        return self.url + "/v1"

    # -- configuration

    def set_faults(self, faults: dict[str, float]) -> None:
        """Replace the fault probabilities.

        Args:
            faults: Probability per fault kind; see the constructor.
        """
        unknown = set(faults) - FAULT_KINDS
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; expected some of {sorted(FAULT_KINDS)}")
        if any(not 0.0 <= p <= 1.0 for p in faults.values()):
            raise ValueError(f"fault probabilities must be within [0, 1]: {faults}")
        if sum(faults.values()) > 1.0 + 1e-9:
            raise ValueError(f"fault probabilities sum to more than 1: {faults}")
        with self._lock:
            self._faults = dict(faults)

    def push_faults(self, kinds: Iterable[str | None]) -> None:
        """Queue faults for the next chat requests, after any already queued.

        Args:
            kinds: Fault kinds in the order they should hit requests; ``None``
                lets the corresponding request through untouched.
        """
        kinds = list(kinds)
        unknown = {k for k in kinds if k is not None} - FAULT_KINDS
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}")
        with self._lock:
            self._fault_script.extend(kinds)

    # -- stats

    def _init_stats(self) -> None:
        self._http = 0
        self._total = 0
        # Wall-clock (epoch) times of the first and latest chat request: benchmarks
        # read the client's time to first request and the server's busy span from them.
        self._first_at: float | None = None
        self._last_at: float | None = None
        self._by_path: dict[str, int] = {}
        self._by_api: dict[str, int] = {}
        self._fault_counts: dict[str, int] = {}
        self._counters: dict[str, int] = {"successes": 0, "policy_misses": 0, "policy_errors": 0}
        self._models_seen: list[str | None] = []
        self._auth_seen: list[dict[str, bool]] = []
        self._requests: list[dict[str, Any]] = []

    def stats(self) -> dict[str, Any]:
        """Return a snapshot of the counters (also served at ``GET /_stats``).

        Keys: ``total_requests`` (chat requests only), ``by_path``, ``by_api``,
        ``faults`` (per injected kind), ``successes`` (policy replies),
        ``policy_misses``, ``policy_errors``, ``models`` (the ``model`` field of
        every request body, in arrival order), ``auth`` (per request, whether an
        ``authorization`` / ``x-api-key`` header was present -- never the values),
        ``http_requests`` (every HTTP request but the control endpoints),
        ``first_request_at`` / ``last_request_at`` (epoch seconds of the first and the
        latest chat request, None before any) and ``batches`` (:meth:`FakeBatches.stats`).
        """
        with self._lock:
            return {
                "total_requests": self._total,
                "first_request_at": self._first_at,
                "last_request_at": self._last_at,
                "by_path": dict(self._by_path),
                "by_api": dict(self._by_api),
                "faults": dict(self._fault_counts),
                **self._counters,
                "models": list(self._models_seen),
                "auth": [dict(a) for a in self._auth_seen],
                "http_requests": self._http,
                "batches": self.batches.stats(),
            }

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat request received: dicts with ``path``, ``api``, ``headers``
        (lower-cased names, values kept including credentials) and ``body``
        (parsed JSON, or the raw text if it was not JSON)."""
        with self._lock:
            return list(self._requests)

    def reset(self) -> None:
        """Clear counters and recorded requests (faults and policy stay as they are)."""
        with self._lock:
            self._init_stats()
        self.batches.reset_stats()

    def _record(self, path: str, api: str, headers: dict[str, str], body: Any) -> None:
        model = body.get("model") if isinstance(body, dict) else None
        now = time.time()
        with self._lock:
            self._total += 1
            if self._first_at is None:
                self._first_at = now
            self._last_at = now
            self._by_path[path] = self._by_path.get(path, 0) + 1
            self._by_api[api] = self._by_api.get(api, 0) + 1
            self._models_seen.append(model)
            self._auth_seen.append({"authorization": "authorization" in headers, "x_api_key": "x-api-key" in headers})
            if self.record_requests:
                self._requests.append({"path": path, "api": api, "headers": headers, "body": body})

    def _count_http(self) -> None:
        with self._lock:
            self._http += 1

    def _prompt_tokens(self, messages: list[Message], model: str) -> int:
        if self.token_counter is not None:
            return int(self.token_counter(messages, model))
        return max(1, sum(_count_tokens(m["content"]) for m in messages))

    def _count(self, key: str) -> None:
        with self._lock:
            self._counters[key] += 1

    def _count_fault(self, kind: str) -> None:
        with self._lock:
            self._fault_counts[kind] = self._fault_counts.get(kind, 0) + 1

    def _next_fault(self) -> str | None:
        with self._lock:
            if self._fault_script:
                return self._fault_script.pop(0)
            if not self._faults:
                return None
            draw = self._rng.random()
            cumulative = 0.0
            for kind, probability in self._faults.items():
                cumulative += probability
                if draw < cumulative:
                    return kind
            return None

    def _answered(self) -> None:
        """Count a chat answer; with ``die_after``, close once that many are out."""
        with self._lock:
            self._answers += 1
            dying = self.die_after is not None and self._answers == self.die_after
        if dying:
            self._dead.set()
            # From another thread: close() waits for the serving loop, which waits for handlers.
            threading.Thread(target=self.close, name="FakeLLMServer-die", daemon=True).start()

    def _admit(self) -> None:
        """Count a chat request let through; with ``freeze_after``, freeze once that many were."""
        with self._lock:
            if self.freeze_after is not None and self._admitted >= self.freeze_after:
                self._answering.clear()
            elif not self.frozen:
                self._admitted += 1

    def freeze(self) -> None:
        """Stop answering chat requests (connections are still accepted and read)."""
        self._answering.clear()

    def thaw(self) -> None:
        """Answer again, the held requests included (late: their clients may be gone)."""
        with self._lock:
            self.freeze_after = None
        self._answering.set()

    @property
    def frozen(self) -> bool:
        """Whether chat requests are being held unanswered."""
        return not self._answering.is_set()

    def _serial(self) -> int:
        with self._lock:
            return next(self._serial_counter)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    # -- lifecycle

    def close(self) -> None:
        """Stop serving, release hung handlers and close open client connections."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)

    def serve_until(self, stop: threading.Event) -> None:
        """Block the calling thread until ``stop`` is set, then close the server.

        Args:
            stop: Event that ends serving when set (e.g. from a signal handler).
        """
        try:
            # Also returns when the server closed itself (``die_after``).
            while not stop.wait(0.5) and not self._closing.is_set():
                pass
        finally:
            self.close()

    def __enter__(self) -> FakeLLMServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FakeLLMServer(url={self.url!r})"


# --------------------------------------------------------------------------- CLI


def _field_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    # Conversation-style fields (list of messages): the judged text is the last turn.
    if isinstance(value, list) and value and isinstance(value[-1], dict):
        return _text_of(value[-1].get("content"))
    return None


def _read_jsonl_field(path: str, field: str) -> list[str]:
    texts: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            record = json.loads(line)
            text = _field_text(record.get(field)) if isinstance(record, dict) else None
            if text:
                texts.append(text)
    return texts


def _parse_fault(spec: str) -> tuple[str, float]:
    kind, sep, probability = spec.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--fault expects KIND=PROBABILITY, got {spec!r}")
    kind = kind.strip()
    if kind not in FAULT_KINDS:
        raise argparse.ArgumentTypeError(f"unknown fault kind {kind!r}; expected one of {sorted(FAULT_KINDS)}")
    try:
        return kind, float(probability)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad probability in {spec!r}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fake server from the command line until SIGINT/SIGTERM.

    Args:
        argv: Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns:
        The process exit status.
    """
    parser = argparse.ArgumentParser(prog="python -m prb_tasks.testing.fake_server", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one")
    parser.add_argument("--policy", default="A", help="A, B, garbage, chosen, empty or bon (every role of the "
                        "Best-of-N pipeline: policy, rubric grader, pointwise judge, pairwise judge)")
    parser.add_argument("--chosen-file",
                        help="JSONL whose 'chosen' (and optional 'rejected') fields feed --policy chosen")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each successful reply")
    parser.add_argument("--fault", type=_parse_fault, action="append", default=[], metavar="KIND=P",
                        help=f"inject a fault with probability P; kinds: {', '.join(sorted(FAULT_KINDS))}")
    parser.add_argument("--seed", type=int, default=0, help="seed for fault injection")
    parser.add_argument("--retry-after", type=float, default=0.05, help="Retry-After seconds on 429 replies")
    parser.add_argument("--hang-seconds", type=float, default=30.0, help="stall of the 'timeout' fault")
    parser.add_argument("--verbose", action="store_true", help="log each request to stderr")
    parser.add_argument("--echo-credentials", action="store_true",
                        help="send the credentials each request carried back in errors and replies")
    parser.add_argument("--die-after", type=int, default=None, metavar="N", help="stop listening after N replies")
    parser.add_argument("--max-parallel", type=int, default=None, metavar="N",
                        help="work on at most N chat requests at a time (the rest queue)")
    parser.add_argument("--freeze-after", type=int, default=None, metavar="N",
                        help="after N requests keep accepting requests but answer none (0: frozen from the start)")
    parser.add_argument("--no-logprobs", action="store_true",
                        help="ignore requests for log-probabilities (as servers without them do)")
    args = parser.parse_args(argv)

    chosen = rejected = None
    if args.chosen_file:
        chosen = _read_jsonl_field(args.chosen_file, "chosen")
        rejected = _read_jsonl_field(args.chosen_file, "rejected") or None
    try:
        policy = policy_from_name(args.policy, chosen, rejected)
    except ValueError as exc:
        parser.error(str(exc))

    faults: dict[str, float] = {}
    for kind, probability in args.fault:
        faults[kind] = faults.get(kind, 0.0) + probability

    try:
        server = _start(args, policy, faults)
    except OSError as exc:  # the port is taken (a server left running) or not ours to bind
        print(f"fake_server: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; stop the process "
              "holding it or pick another --port (0 picks a free one)", file=sys.stderr, flush=True)
        return 2
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    print(f"READY {server.url}", flush=True)
    server.serve_until(stop)
    print(stopped_line(server.stats()), file=sys.stderr, flush=True)
    return 0


def _start(args: Any, policy: Any, faults: Any) -> FakeLLMServer:
    """The server the command line asks for, listening."""
    return FakeLLMServer(
        policy,
        latency=args.latency,
        faults=faults,
        seed=args.seed,
        retry_after=args.retry_after,
        hang_seconds=args.hang_seconds,
        host=args.host,
        port=args.port,
        record_requests=False,
        verbose=args.verbose,
        echo_credentials=args.echo_credentials,
        die_after=args.die_after,
        max_parallel=args.max_parallel,
        freeze_after=args.freeze_after,
        logprobs=not args.no_logprobs,
    )


def stopped_line(stats: dict[str, Any]) -> str:
    """The one short line printed when the server stops: its main counters.

    The whole counters (every model and credential seen) ran to about 20,000 characters
    after a walkthrough; they stay at ``GET /_stats`` while the server runs.

    Args:
        stats: :meth:`FakeLLMServer.stats` at the stop.
    """
    faults = sum(stats["faults"].values())
    return (f"fake server: stopped after {stats['total_requests']} requests ({stats['successes']} answered, "
            f"{faults} faults injected); while it runs, GET /_stats has every counter")


if __name__ == "__main__":
    sys.exit(main())

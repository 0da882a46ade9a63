"""Issue 48 item 4: a reply nested 100,000 levels deep or hundreds of megabytes long is one
classified failure of that request (never a ``RecursionError`` traceback, never held whole in
memory), through the judge's direct transport and a served reward model; RM-Bench's
``total_dataset.json`` nested that deep is one line."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import prb_tasks.judge.direct as direct
import prb_tasks.rm.http_client as http_client
from prb_tasks.data.errors import DataError
from prb_tasks.data.rmbench.sources import read_file
from prb_tasks.judge.client import CallError
from prb_tasks.judge.request import ChatRequest
from prb_tasks.rm.errors import ServedRMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.scorers.served import ServedScorer
from prb_tasks.testing.fake_server import FakeLLMServer

REQUEST = ChatRequest(({"role": "user", "content": "A or B?"},), max_tokens=16, temperature=0.0)


def judge_once(server: FakeLLMServer) -> CallError | None:
    """One call of the direct transport to ``server``; the error it ended in, or None."""
    async def call() -> CallError | None:
        client = direct.DirectOpenAIClient("openai/fake", server.openai_base, None, timeout=30, max_connections=2)
        try:
            await client.call(REQUEST)
        except CallError as exc:
            return exc
        finally:
            await client.aclose()
        return None

    return asyncio.run(call())


def test_the_direct_transport_refuses_a_deep_reply_in_one_failure() -> None:
    with FakeLLMServer(fault_script=["deep"]) as srv:
        error = judge_once(srv)
    assert error is not None and error.kind == "malformed" and not error.retryable
    assert "nested thousands of levels deep" in str(error)


def test_the_direct_transport_stops_reading_a_reply_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(direct, "MAX_REPLY_BYTES", 1024**2)
    with FakeLLMServer(fault_script=["huge", None]) as srv:
        srv.huge_bytes = 8 * 1024**2  # streamed without Content-Length: counted while read
        error = judge_once(srv)
        assert error is not None and error.name == "ReplyTooLarge" and not error.retryable
        assert "reply larger than 1 MiB" in str(error)
        assert judge_once(srv) is None  # the next reply is an ordinary one, and is read


class RawReplies:
    """A served RM that answers every POST with the same 200 body (or ``body_size`` spaces)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                owner.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(owner.body)))
                self.end_headers()
                try:
                    self.wfile.write(owner.body)
                except OSError:  # the client stopped reading: what the test wants
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def deep_server() -> Iterator[RawReplies]:
    server = RawReplies(b'{"data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    yield server
    server.close()


@pytest.fixture
def huge_server() -> Iterator[RawReplies]:
    server = RawReplies(json.dumps({"data": [{"probs": [1.0]}], "pad": " " * (3 * 1024**2)}).encode())
    yield server
    server.close()


def score_once(url: str) -> str:
    scorer = ServedScorer(endpoint=url, max_retries=3, backoff_base=0.01, timeout=30)
    with pytest.raises(ServedRMError) as info:
        scorer.score([RMInput("What should I read?", "Dune")])
    return str(info.value)


def test_a_served_rm_refuses_a_deep_reply_in_one_line(deep_server: RawReplies) -> None:
    message = score_once(deep_server.url)
    assert "\n" not in message and "nested thousands of levels deep" in message
    assert deep_server.requests == 1  # not retried: the server would send it again


def test_a_served_rm_refuses_a_reply_past_the_cap(huge_server: RawReplies, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_client, "MAX_REPLY_BYTES", 1024**2)
    message = score_once(huge_server.url)
    assert "\n" not in message and "reply larger than 1 MiB" in message
    assert huge_server.requests == 1


def test_an_rmbench_file_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "total_dataset.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(DataError) as info:
        read_file(path)
    assert str(info.value) == (f"prb: {path} is nested too deeply to read (lists or mappings inside each other "
                               "thousands of levels deep); fix or remove it")

"""Offline tests of :mod:`prb_tasks.testing.fake_server`, driven through prb's own judge client.

Every provider call goes through :class:`prb_tasks.judge.client.LiteLLMClient` (litellm
over real sockets, litellm's retries off), and the tests check *our* outcome: the text,
refusal flag and token counts of the :class:`CallResult`, or the kind, retry decision and
honoured ``Retry-After`` of the :class:`CallError`. Where litellm puts a header, which
exception class a status becomes or how a refusal is surfaced changes between releases;
those details are the client's business and must not make these tests depend on one
release. What the tests do pin is the wire format the fake server sees (paths, bodies,
auth headers), because that is the contract the fake server must keep with real clients.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.judge.client import CallError, CallResult, LiteLLMClient
from prb_tasks.judge.request import ChatRequest
from prb_tasks.testing.fake_server import (
    REFUSAL_TEXT,
    FakeLLMServer,
    Message,
    PolicyMiss,
    always,
    garbage,
    policy_from_name,
    prefer_texts,
    scripted,
)
from tests.watchdog import HTTP_BOUND, communicate_watched

REPO_ROOT = Path(__file__).resolve().parents[2]
USER = [{"role": "user", "content": "Which response is better?"}]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(policy=always("A"), hang_seconds=2.0) as srv:
        yield srv


def client_for(srv: FakeLLMServer, provider: str, timeout: float = 10.0) -> LiteLLMClient:
    """prb's litellm client pointed at ``srv`` as one of the three wire formats.

    Args:
        srv: The fake server to talk to.
        provider: ``"openai"``, ``"anthropic"`` or ``"ollama"``.
        timeout: Seconds per attempt.
    """
    model, base = {
        "openai": ("openai/fake", srv.openai_base),
        "anthropic": ("anthropic/claude-x", srv.url),
        "ollama": ("ollama_chat/qwen", srv.url),
    }[provider]
    return LiteLLMClient(model, base, "sk-test", timeout)


def request(messages: list[dict[str, Any]] | None = None, **params: Any) -> ChatRequest:
    """A :class:`ChatRequest` with ``messages`` (default: one user turn) and sampling ``params``."""
    turns = tuple(messages or USER)
    return ChatRequest(messages=turns, **params)  # type: ignore[arg-type]


def call(srv: FakeLLMServer, provider: str, messages: list[dict[str, Any]] | None = None,
         timeout: float = 10.0, **params: Any) -> CallResult:
    """One judge call against ``srv`` through prb's client; raises :class:`CallError` on failure.

    Args:
        srv: The fake server to talk to.
        provider: ``"openai"``, ``"anthropic"`` or ``"ollama"``.
        messages: Chat messages; defaults to a single user turn.
        timeout: Seconds per attempt.
        **params: Sampling parameters of the request (temperature, max_tokens, ...).
    """
    return asyncio.run(client_for(srv, provider, timeout).call(request(messages, **params)))


def raw_request(srv: FakeLLMServer, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], bytes]:
    """Send one HTTP request with the stdlib client and return status, lower-cased headers and body.

    Args:
        srv: The fake server to talk to.
        method: HTTP method.
        path: Request path.
        body: JSON-serializable request body, or None for no body.
    """
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=HTTP_BOUND)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def judge_prompt(first: str, second: str) -> str:
    """Render a judge prompt shaped like the project's templates.

    Args:
        first: Text shown as Response A.
        second: Text shown as Response B.
    """
    return (
        "Compare Response A and Response B and pick the better one.\n\n"
        "Question: Is the sky blue?\n\n"
        f"Response A:\n{first}\n\n"
        f"Response B:\n{second}\n\n"
        "Finish with 'Result: A' or 'Result: B'."
    )


PROVIDERS = ["openai", "anthropic", "ollama"]


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("provider", PROVIDERS)
def test_content_and_usage_round_trip(server: FakeLLMServer, provider: str) -> None:
    result = call(server, provider, temperature=0.0, max_tokens=16)
    assert result.text == "The answer fits.\nResult: A"
    assert not result.refused
    assert result.input_tokens is not None and result.input_tokens > 0
    assert result.output_tokens == 5


def test_paths_params_and_headers_are_recorded(server: FakeLLMServer) -> None:
    for provider in PROVIDERS:
        call(server, provider, temperature=0.25, max_tokens=16)
    reqs = server.requests
    assert [r["path"] for r in reqs] == ["/v1/chat/completions", "/v1/messages", "/api/chat"]
    openai_req, anthropic_req, ollama_req = reqs
    assert openai_req["body"]["temperature"] == 0.25
    assert openai_req["body"]["model"] == "fake"
    assert openai_req["headers"]["authorization"] == "Bearer sk-test"
    assert anthropic_req["body"]["temperature"] == 0.25
    assert anthropic_req["headers"]["x-api-key"] == "sk-test"
    assert ollama_req["body"]["options"]["temperature"] == 0.25
    assert ollama_req["body"]["stream"] is False

    stats = server.stats()
    assert stats["models"] == ["fake", "claude-x", "qwen"]
    assert stats["auth"] == [
        {"authorization": True, "x_api_key": False},
        {"authorization": False, "x_api_key": True},
        {"authorization": True, "x_api_key": False},
    ]


def test_messages_are_normalized_for_the_policy() -> None:
    seen: list[list[Message]] = []

    def capture(messages: list[Message], model: str) -> str:
        seen.append(messages)
        return "ok"

    messages = [
        {"role": "system", "content": "Be a judge."},
        {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]},
    ]
    with FakeLLMServer(policy=capture) as srv:
        for provider in PROVIDERS:
            assert call(srv, provider, messages=messages).text == "ok"
    assert len(seen) == len(PROVIDERS)
    for turns in seen:
        # Whatever separator a client puts between text parts, the policy sees one plain
        # string per turn with the parts in order.
        assert turns[0] == {"role": "system", "content": "Be a judge."}
        assert turns[1]["role"] == "user" and isinstance(turns[1]["content"], str)
        content = turns[1]["content"]
        assert content.index("part one") < content.index("part two")


def test_ollama_streaming_is_answered_with_ndjson(server: FakeLLMServer) -> None:
    server.policy = always("B")
    status, headers, body = raw_request(server, "POST", "/api/chat",
                                        {"model": "qwen", "stream": True, "messages": USER})
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert status == 200 and headers["content-type"] == "application/x-ndjson"
    assert all(not line["done"] for line in lines[:-1])
    assert lines[-1]["done"] is True and lines[-1]["eval_count"] == 5
    assert "".join(line["message"]["content"] for line in lines) == "The answer fits.\nResult: B"


def test_model_listing_and_control_endpoints(server: FakeLLMServer) -> None:
    status, _, body = raw_request(server, "GET", "/v1/models")
    assert status == 200 and json.loads(body)["data"][0]["id"] == "fake"
    status, _, body = raw_request(server, "GET", "/api/tags")
    assert status == 200 and json.loads(body)["models"][0]["name"] == "fake"

    call(server, "openai")
    status, _, body = raw_request(server, "GET", "/_stats")
    assert status == 200 and json.loads(body)["total_requests"] == 1
    status, _, _ = raw_request(server, "POST", "/_reset")
    assert status == 200
    assert server.stats()["total_requests"] == 0
    assert server.requests == []


def test_anthropic_base_with_v1_suffix_gets_a_hint(server: FakeLLMServer) -> None:
    status, _, body = raw_request(server, "POST", "/v1/v1/messages", {"model": "claude-x", "messages": USER})
    assert status == 404
    assert "without /v1" in json.loads(body)["error"]["message"]


# --------------------------------------------------------------------------- faults

# fault: (kinds prb may report, retry it?, stop the run?). Which litellm exception a
# status becomes differs between providers and releases (a 503 is ServiceUnavailableError
# from one, InternalServerError from another); what the run does about it must not.
FAULT_OUTCOMES: dict[str, tuple[set[str], bool, bool]] = {
    "429": ({"rate_limit"}, True, False),
    "500": ({"server"}, True, False),
    "503": ({"server"}, True, False),
    "401": ({"auth"}, False, True),
    "400": ({"bad_request"}, False, True),
    "404": ({"not_found"}, False, True),
    "drop": ({"server", "connection"}, True, False),
    "malformed": ({"server", "connection", "malformed"}, True, False),
}


@pytest.mark.parametrize("fault", sorted(FAULT_OUTCOMES))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_fault_is_classified_for_the_retry_policy(server: FakeLLMServer, provider: str, fault: str) -> None:
    server.push_faults([fault])
    with pytest.raises(CallError) as info:
        call(server, provider)
    kinds, retryable, fatal = FAULT_OUTCOMES[fault]
    err = info.value
    assert err.kind in kinds, (err.kind, err.name, err.message)
    assert (err.retryable, err.fatal) == (retryable, fatal)
    assert "sk-test" not in str(err)
    # The fault hit exactly one request; the next one goes through.
    assert call(server, provider).text.endswith("Result: A")
    stats = server.stats()
    assert stats["faults"] == {fault: 1}
    assert stats["total_requests"] == 2 and stats["successes"] == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limit_wait_is_the_servers(provider: str) -> None:
    with FakeLLMServer(fault_script=["429", "429"], retry_after=0.25) as srv:
        with pytest.raises(CallError) as info:
            call(srv, provider)
        assert info.value.kind == "rate_limit" and info.value.retryable
        assert info.value.retry_after == pytest.approx(0.25)
        srv.retry_after = 3.0
        with pytest.raises(CallError) as info:
            call(srv, provider)
        assert info.value.retry_after == pytest.approx(3.0)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hang_times_out(server: FakeLLMServer, provider: str) -> None:
    server.hang_seconds = 600.0  # closing the server releases the stall at once
    server.push_faults(["timeout"])
    start = time.monotonic()
    with pytest.raises(CallError) as info:
        call(server, provider, timeout=0.5)
    assert info.value.kind == "timeout" and info.value.retryable and not info.value.fatal
    # The fault stalls 600 s: half of that is room for any loaded machine, and still means the
    # 0.5 s timeout ended it.
    assert time.monotonic() - start < 300


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_and_refusal_replies(server: FakeLLMServer, provider: str) -> None:
    server.push_faults(["empty", "refusal"])
    empty = call(server, provider)
    assert empty.text == "" and not empty.refused
    refusal = call(server, provider)
    assert refusal.text == REFUSAL_TEXT
    # Only the OpenAI wire format has a refusal field; the others send plain text.
    assert refusal.refused is (provider == "openai")
    assert server.stats()["faults"] == {"empty": 1, "refusal": 1}
    assert server.stats()["successes"] == 0


def test_error_bodies_use_each_api_shape(server: FakeLLMServer) -> None:
    server.push_faults(["429", "429", "429"])
    status, headers, body = raw_request(server, "POST", "/v1/chat/completions", {"model": "m", "messages": USER})
    assert status == 429 and headers["retry-after"] == "0.05" and headers["retry-after-ms"] == "50"
    error = json.loads(body)["error"]
    assert {"message", "type", "code"} <= set(error)

    status, _, body = raw_request(server, "POST", "/v1/messages", {"model": "m", "messages": USER})
    payload = json.loads(body)
    assert status == 429 and payload["type"] == "error" and payload["error"]["type"] == "rate_limit_error"

    status, _, body = raw_request(server, "POST", "/api/chat", {"model": "m", "messages": USER})
    assert status == 429 and isinstance(json.loads(body)["error"], str)


def test_seeded_faults_are_reproducible() -> None:
    def statuses(seed: int) -> list[int]:
        with FakeLLMServer(faults={"500": 0.3, "429": 0.2}, seed=seed) as srv:
            result = [raw_request(srv, "POST", "/api/chat", {"model": "m", "messages": USER})[0]
                      for _ in range(30)]
            stats = srv.stats()
        assert stats["faults"].get("500", 0) == result.count(500)
        assert stats["faults"].get("429", 0) == result.count(429)
        assert stats["successes"] == result.count(200)
        return result

    first = statuses(3)
    assert first == statuses(3)
    assert {200, 429, 500} <= set(first)


def test_fault_script_runs_before_probabilities() -> None:
    with FakeLLMServer(faults={"500": 1.0}, fault_script=[None, "404"]) as srv:
        codes = [raw_request(srv, "POST", "/api/chat", {"model": "m", "messages": USER})[0] for _ in range(3)]
    assert codes == [200, 404, 500]


def test_invalid_fault_configuration_is_rejected() -> None:
    with pytest.raises(ValueError):
        FakeLLMServer(faults={"teapot": 0.1})
    with pytest.raises(ValueError):
        FakeLLMServer(faults={"429": 0.7, "500": 0.7})


def test_broken_policy_surfaces_as_500() -> None:
    def explode(messages: list[Message], model: str) -> str:
        raise RuntimeError("boom")

    with FakeLLMServer(policy=explode) as srv:
        with pytest.raises(CallError) as info:
            call(srv, "openai")
        assert info.value.kind == "server" and info.value.retryable and "boom" in info.value.message
        assert srv.stats()["policy_errors"] == 1


# --------------------------------------------------------------------------- policies

CHOSEN = "Yes, because of Rayleigh scattering."
REJECTED = "No, it is green."


def ask(policy: Any, prompt: str) -> str:
    """Call ``policy`` directly with a system turn and ``prompt`` as the user turn.

    Args:
        policy: The policy under test.
        prompt: Content of the user message.
    """
    return policy([{"role": "system", "content": "judge"}, {"role": "user", "content": prompt}], "m")


def test_prefer_texts_follows_the_chosen_position() -> None:
    policy = prefer_texts([CHOSEN, "unrelated other chosen text"])
    first = ask(policy, judge_prompt(CHOSEN, REJECTED))
    second = ask(policy, judge_prompt(REJECTED, CHOSEN))
    assert first.endswith("Result: A") and not isinstance(first, PolicyMiss)
    assert second.endswith("Result: B") and not isinstance(second, PolicyMiss)


def test_prefer_texts_handles_a_chosen_text_inside_the_rejected_one() -> None:
    policy = prefer_texts(["Yes"])
    assert ask(policy, judge_prompt("Yes, but only at noon.", "Yes")).endswith("Result: B")
    assert ask(policy, judge_prompt("Yes", "Yes, but only at noon.")).endswith("Result: A")


def test_prefer_texts_uses_rejected_texts_without_headings() -> None:
    policy = prefer_texts([CHOSEN], rejected_texts=[REJECTED])
    assert ask(policy, f"First:\n{REJECTED}\n\nSecond:\n{CHOSEN}").endswith("Result: B")
    assert ask(policy, f"First:\n{CHOSEN}\n\nSecond:\n{REJECTED}").endswith("Result: A")


def test_prefer_texts_marks_guesses_as_misses() -> None:
    policy = prefer_texts([CHOSEN])
    not_found = ask(policy, judge_prompt("something", "else"))
    assert isinstance(not_found, PolicyMiss) and not_found.endswith("Result: A")
    # No headings and no rejected text: only the position in the prompt is left.
    guessed = ask(policy, f"x\n{REJECTED}\n{CHOSEN}")
    assert isinstance(guessed, PolicyMiss) and guessed.endswith("Result: B")


def test_prefer_texts_through_litellm_counts_misses() -> None:
    with FakeLLMServer(policy=prefer_texts([CHOSEN])) as srv:
        for provider in PROVIDERS:
            for first, second, letter in [(CHOSEN, REJECTED, "A"), (REJECTED, CHOSEN, "B")]:
                msgs = [{"role": "system", "content": "judge"},
                        {"role": "user", "content": judge_prompt(first, second)}]
                assert call(srv, provider, messages=msgs).text.endswith(f"Result: {letter}")
        call(srv, "openai", messages=[{"role": "user", "content": judge_prompt("a", "b")}])
        stats = srv.stats()
    assert stats["successes"] == 7
    assert stats["policy_misses"] == 1


def test_simple_policies() -> None:
    assert ask(always("B"), "") == "The answer fits.\nResult: B"
    assert "Result" not in ask(garbage(), "")
    cycle = scripted(["one", "two"])
    assert [ask(cycle, "") for _ in range(3)] == ["one", "two", "one"]
    assert ask(policy_from_name("a"), "").endswith("Result: A")
    assert ask(policy_from_name("empty"), "") == ""
    assert ask(policy_from_name("chosen", [CHOSEN]), judge_prompt(REJECTED, CHOSEN)).endswith("Result: B")
    with pytest.raises(ValueError):
        policy_from_name("chosen")
    with pytest.raises(ValueError):
        policy_from_name("nonsense")


# --------------------------------------------------------------------------- transport


def test_keep_alive_serves_several_requests_on_one_socket(server: FakeLLMServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=HTTP_BOUND)
    try:
        sockets = []
        for _ in range(3):
            conn.request("POST", "/v1/chat/completions", body=json.dumps({"model": "m", "messages": USER}),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            assert json.loads(resp.read())["choices"][0]["message"]["content"].endswith("Result: A")
            sockets.append(conn.sock)
        assert sockets[0] is not None and sockets[0] is sockets[1] is sockets[2]
    finally:
        conn.close()


def test_latency_overlaps_across_64_concurrent_requests() -> None:
    async def all_at_once(srv: FakeLLMServer) -> list[CallResult]:
        client = client_for(srv, "openai")
        return await asyncio.gather(*(client.call(request()) for _ in range(64)))

    with FakeLLMServer(latency=1.0) as srv:
        start = time.monotonic()
        results = asyncio.run(all_at_once(srv))
        elapsed = time.monotonic() - start
        assert srv.stats()["successes"] == 64
    assert all(r.text.endswith("Result: A") for r in results)
    # Serialized handling would take 64 * 1 = 64 s; concurrent handling about 1 s, and far
    # under half the serial time even on a loaded machine.
    assert elapsed < 32.0


def test_close_releases_hung_handlers_quickly() -> None:
    srv = FakeLLMServer(fault_script=["timeout"], hang_seconds=600)
    outcome: list[BaseException] = []

    def hang() -> None:
        try:
            raw_request(srv, "POST", "/api/chat", {"model": "m", "messages": USER})
        except (http.client.HTTPException, OSError) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=hang)
    thread.start()
    time.sleep(0.2)
    start = time.monotonic()
    srv.close()
    assert time.monotonic() - start < 300  # the handler hangs 600 s unless close releases it
    thread.join(timeout=300)
    assert not thread.is_alive()
    # The hung request is abandoned without a reply rather than answered late.
    assert len(outcome) == 1


def test_cli_prints_ready_and_serves(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps({"chosen": t, "rejected": REJECTED}) for t in [CHOSEN, "other"]) + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "prb_tasks.testing.fake_server", "--port", "0", "--policy", "chosen",
         "--chosen-file", str(data), "--latency", "0.01", "--fault", "429=0.5", "--seed", "0"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:"), line
        port = int(line.rsplit(":", 1)[1])
        statuses = []
        for _ in range(10):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HTTP_BOUND)
            body = {"model": "m", "messages": [{"role": "user", "content": judge_prompt(REJECTED, CHOSEN)}]}
            conn.request("POST", "/v1/chat/completions", body=json.dumps(body))
            resp = conn.getresponse()
            payload = json.loads(resp.read())
            statuses.append(resp.status)
            if resp.status == 200:
                assert payload["choices"][0]["message"]["content"].endswith("Result: B")
            conn.close()
        assert {200, 429} == set(statuses)
    finally:
        proc.terminate()
        _, err = communicate_watched(proc)
    assert proc.returncode == 0
    # One short line at the stop (the whole counters ran to about 20,000 characters after a walkthrough).
    assert err.strip().splitlines()[-1] == (
        f"fake server: stopped after 10 requests ({statuses.count(200)} answered, {statuses.count(429)} faults "
        "injected); while it runs, GET /_stats has every counter")

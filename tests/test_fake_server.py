"""Offline tests of :mod:`prb_tasks.testing.fake_server`, driven through litellm over real sockets.

Observed litellm behaviour (litellm 1.106.2, openai 2.54.0, httpx 0.28.1), which
these tests pin down so that a litellm upgrade changing it is noticed:

* Paths litellm posts to: ``openai/<m>`` with ``api_base=<url>/v1`` ->
  ``POST /v1/chat/completions``; ``anthropic/<m>`` with ``api_base=<url>`` ->
  ``POST /v1/messages`` (an ``api_base`` ending in ``/v1`` yields
  ``/v1/v1/messages``); ``ollama_chat/<m>`` with ``api_base=<url>`` ->
  ``POST /api/chat`` with ``"stream": false`` (``true`` when ``stream=True``).
* ``Retry-After`` of a 429 is visible on ``exc.litellm_response_headers``
  (``httpx.Headers`` for openai/anthropic, a plain lower-cased ``dict`` for
  ollama_chat). ``exc.response`` is a synthetic ``httpx.Response`` whose headers
  are empty, so it cannot be used for that.
* Fault -> exception class: 429 RateLimitError; 500 InternalServerError; 503
  ServiceUnavailableError (openai, ollama) but InternalServerError (anthropic);
  401 AuthenticationError; 400 BadRequestError; 404 NotFoundError; hang with
  ``timeout=0.5`` Timeout; dropped socket InternalServerError (openai, anthropic)
  or APIConnectionError (ollama); malformed JSON InternalServerError (openai) or
  APIConnectionError (anthropic, ollama).
* Empty content comes back as ``""`` (openai, ollama) but ``None`` (anthropic).
  The OpenAI ``message.refusal`` field surfaces as
  ``message.provider_specific_fields["refusal"]``.
* ``max_retries=0`` means exactly one HTTP request per call for all three providers.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

# Must be set before litellm is imported, otherwise it tries to fetch the cost map.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

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

litellm.suppress_debug_info = True

REPO_ROOT = Path(__file__).resolve().parents[1]
USER = [{"role": "user", "content": "Which response is better?"}]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(policy=always("A"), hang_seconds=2.0) as srv:
        yield srv


def call(srv: FakeLLMServer, provider: str, messages: list[dict[str, Any]] | None = None, **kwargs: Any) -> Any:
    """Run one litellm completion against ``srv``.

    Args:
        srv: The fake server to talk to.
        provider: ``"openai"``, ``"anthropic"`` or ``"ollama"``.
        messages: Chat messages; defaults to a single user turn.
        **kwargs: Extra litellm.completion arguments (temperature, timeout, ...).
    """
    model, base = {
        "openai": ("openai/fake", srv.openai_base),
        "anthropic": ("anthropic/claude-x", srv.url),
        "ollama": ("ollama_chat/qwen", srv.url),
    }[provider]
    kwargs.setdefault("max_retries", 0)
    return litellm.completion(model=model, api_base=base, api_key="sk-test", messages=messages or USER, **kwargs)


def raw_request(srv: FakeLLMServer, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], bytes]:
    """Send one HTTP request with the stdlib client and return status, lower-cased headers and body.

    Args:
        srv: The fake server to talk to.
        method: HTTP method.
        path: Request path.
        body: JSON-serializable request body, or None for no body.
    """
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
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
    resp = call(server, provider, temperature=0.0, max_tokens=16)
    assert resp.choices[0].message.content == "The answer fits.\nResult: A"
    assert resp.usage.prompt_tokens > 0
    assert resp.usage.completion_tokens == 5
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


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
            assert call(srv, provider, messages=messages).choices[0].message.content == "ok"
    openai_msgs, anthropic_msgs, ollama_msgs = seen
    assert openai_msgs == anthropic_msgs == [
        {"role": "system", "content": "Be a judge."},
        {"role": "user", "content": "part one\npart two"},
    ]
    # litellm's ollama_chat glues text parts together before sending.
    assert ollama_msgs[0] == {"role": "system", "content": "Be a judge."}
    assert ollama_msgs[1]["content"] == "part onepart two"


def test_ollama_streaming_is_answered_with_ndjson(server: FakeLLMServer) -> None:
    server.policy = always("B")
    chunks = list(call(server, "ollama", stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "The answer fits.\nResult: B"
    assert server.requests[-1]["body"]["stream"] is True

    status, headers, body = raw_request(server, "POST", "/api/chat",
                                        {"model": "qwen", "stream": True, "messages": USER})
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert status == 200 and headers["content-type"] == "application/x-ndjson"
    assert all(not line["done"] for line in lines[:-1])
    assert lines[-1]["done"] is True and lines[-1]["eval_count"] == 5


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

STATUS_FAULTS = {
    # fault: {provider: expected litellm exception class}
    "429": dict.fromkeys(PROVIDERS, litellm.RateLimitError),
    "500": dict.fromkeys(PROVIDERS, litellm.InternalServerError),
    "503": {"openai": litellm.ServiceUnavailableError, "anthropic": litellm.InternalServerError,
            "ollama": litellm.ServiceUnavailableError},
    "401": dict.fromkeys(PROVIDERS, litellm.AuthenticationError),
    "400": dict.fromkeys(PROVIDERS, litellm.BadRequestError),
    "404": dict.fromkeys(PROVIDERS, litellm.NotFoundError),
    "drop": {"openai": litellm.InternalServerError, "anthropic": litellm.InternalServerError,
             "ollama": litellm.APIConnectionError},
    "malformed": {"openai": litellm.InternalServerError, "anthropic": litellm.APIConnectionError,
                  "ollama": litellm.APIConnectionError},
}


@pytest.mark.parametrize("fault", sorted(STATUS_FAULTS))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_fault_maps_to_litellm_exception(server: FakeLLMServer, provider: str, fault: str) -> None:
    server.push_faults([fault])
    with pytest.raises(Exception) as info:
        call(server, provider)
    assert type(info.value) is STATUS_FAULTS[fault][provider], repr(info.value)
    # The fault hit exactly one request; the next one goes through.
    assert call(server, provider).choices[0].message.content.endswith("Result: A")
    stats = server.stats()
    assert stats["faults"] == {fault: 1}
    assert stats["total_requests"] == 2 and stats["successes"] == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limit_exposes_retry_after(provider: str) -> None:
    with FakeLLMServer(fault_script=["429"], retry_after=0.25) as srv, pytest.raises(litellm.RateLimitError) as info:
        call(srv, provider)
    headers = info.value.litellm_response_headers
    assert headers is not None
    assert headers.get("retry-after") == "0.25"
    assert headers.get("retry-after-ms") == "250"
    # litellm fabricates exc.response, so its headers do not carry the server's.
    assert "retry-after" not in info.value.response.headers


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hang_times_out(server: FakeLLMServer, provider: str) -> None:
    server.push_faults(["timeout"])
    start = time.monotonic()
    with pytest.raises(litellm.Timeout):
        call(server, provider, timeout=0.5)
    assert time.monotonic() - start < 1.5


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_and_refusal_replies(server: FakeLLMServer, provider: str) -> None:
    server.push_faults(["empty", "refusal"])
    empty_content = call(server, provider).choices[0].message.content
    # litellm turns an empty Anthropic text block into None.
    assert empty_content == (None if provider == "anthropic" else "")
    refusal = call(server, provider).choices[0].message
    assert refusal.content == REFUSAL_TEXT
    if provider == "openai":
        assert refusal.provider_specific_fields["refusal"] == REFUSAL_TEXT
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
        with pytest.raises(litellm.InternalServerError, match="boom"):
            call(srv, "openai")
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
                assert call(srv, provider, messages=msgs).choices[0].message.content.endswith(f"Result: {letter}")
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
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
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
    with FakeLLMServer(latency=0.3) as srv:
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=64) as pool:
            results = list(pool.map(lambda _: call(srv, "openai", timeout=10), range(64)))
        elapsed = time.monotonic() - start
        assert srv.stats()["successes"] == 64
    assert all(r.choices[0].message.content.endswith("Result: A") for r in results)
    # Serialized handling would take 64 * 0.3 s.
    assert elapsed < 4.0


def test_close_releases_hung_handlers_quickly() -> None:
    srv = FakeLLMServer(fault_script=["timeout"], hang_seconds=30)
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
    assert time.monotonic() - start < 2.0
    thread.join(timeout=5)
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
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
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
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    final_stats = json.loads(err.strip().splitlines()[-1])
    assert final_stats["total_requests"] == 10
    assert final_stats["faults"]["429"] == statuses.count(429)

"""The fake server's batch APIs, over real sockets: OpenAI files + batches through
litellm's batch functions, Anthropic message batches with the stdlib HTTP client."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm

from prb_tasks.testing.fake_batches import BatchScript
from prb_tasks.testing.fake_server import FakeLLMServer, always, scripted
from tests.watchdog import HTTP_BOUND

litellm.suppress_debug_info = True


def call(srv: FakeLLMServer, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=HTTP_BOUND)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json", "x-api-key": "k"})
        reply = conn.getresponse()
        data = reply.read()
        try:
            return reply.status, json.loads(data)
        except ValueError:
            return reply.status, data
    finally:
        conn.close()


def openai_lines(n: int, model: str = "fake") -> bytes:
    return b"".join(
        json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
                    "body": {"model": model, "messages": [{"role": "user", "content": f"question {i}"}]}}).encode()
        + b"\n" for i in range(n))


def anthropic_requests(n: int) -> dict[str, Any]:
    return {"requests": [{"custom_id": f"r{i}", "params": {"model": "claude-x", "max_tokens": 16,
                                                          "messages": [{"role": "user", "content": f"q {i}"}]}}
                         for i in range(n)]}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def kw(srv: FakeLLMServer) -> dict[str, Any]:
    return {"custom_llm_provider": "openai", "api_base": srv.openai_base, "api_key": "sk-test", "max_retries": 0}


async def openai_batch(srv: FakeLLMServer, n: int) -> Any:
    uploaded = await litellm.acreate_file(file=("in.jsonl", openai_lines(n)), purpose="batch", **kw(srv))
    return await litellm.acreate_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                       input_file_id=uploaded.id, metadata={"t": "1"}, **kw(srv))


async def retrieve(srv: FakeLLMServer, batch_id: str) -> Any:
    return await litellm.aretrieve_batch(batch_id=batch_id, **kw(srv))


async def content(srv: FakeLLMServer, file_id: str) -> list[dict[str, Any]]:
    data = await litellm.afile_content(file_id=file_id, **kw(srv))
    return [json.loads(line) for line in data.content.decode().splitlines()]


def test_openai_batch_goes_through_its_states_and_answers_with_the_policy() -> None:
    with FakeLLMServer(scripted(["Result: A", "Result: B"])) as srv:
        srv.batches.script(BatchScript(polls=2, errors={1: "500", 2: "400"}))
        batch = run(openai_batch(srv, 4))
        assert batch.status == "validating"
        states = [run(retrieve(srv, batch.id)).status for _ in range(3)]
        assert states == ["validating", "in_progress", "completed"]
        done = run(retrieve(srv, batch.id))
        assert done.request_counts.completed == 2 and done.request_counts.failed == 2
        ok = run(content(srv, done.output_file_id))
        bad = run(content(srv, done.error_file_id))
        # Results come back in no particular order: ids, not positions, identify them.
        assert sorted(r["custom_id"] for r in ok) == ["r0", "r3"]
        assert {r["response"]["body"]["choices"][0]["message"]["content"] for r in ok} == {"Result: A", "Result: B"}
        assert {r["custom_id"]: r["response"]["status_code"] for r in bad} == {"r1": 500, "r2": 400}
        stats = srv.stats()
        assert stats["batches"]["created"] == 1 and stats["batches"]["requests"] == 4
        assert stats["batches"]["answered"] == 2 and stats["total_requests"] == 0
        assert stats["http_requests"] == 2 + 4 + 2  # upload, create, 4 polls, 2 downloads


def test_openai_expired_failed_and_cancelled_batches() -> None:
    with FakeLLMServer(always("B")) as srv:
        srv.batches.script(BatchScript(polls=0, end="expired", answered=1), BatchScript(polls=0, end="failed"))
        expired = run(openai_batch(srv, 3))
        failed = run(openai_batch(srv, 2))
        expired = run(retrieve(srv, expired.id))
        assert expired.status == "expired" and expired.request_counts.completed == 1
        codes = {r["custom_id"]: r["error"]["code"] for r in run(content(srv, expired.error_file_id))}
        assert codes == {"r1": "batch_expired", "r2": "batch_expired"}
        failed = run(retrieve(srv, failed.id))
        assert failed.status == "failed" and failed.output_file_id is None and failed.errors.data[0].message

        srv.batches.script(BatchScript(polls=100, answered=2))
        running = run(openai_batch(srv, 3))
        cancelling = run(litellm.acancel_batch(batch_id=running.id, **kw(srv)))
        assert cancelling.status == "cancelling"
        cancelled = run(retrieve(srv, running.id))
        assert cancelled.status == "cancelled" and cancelled.request_counts.completed == 2
        listed = run(litellm.alist_batches(limit=2, **kw(srv)))
        assert [b.id for b in listed.data] == [running.id, failed.id] and listed.has_more


def test_openai_input_file_is_validated_like_the_real_api() -> None:
    with FakeLLMServer() as srv:
        srv.batches.script(BatchScript(polls=0))
        bad = openai_lines(2) + openai_lines(1)  # r0 twice
        uploaded = run(litellm.acreate_file(file=("x.jsonl", bad), purpose="batch", **kw(srv)))
        batch = run(litellm.acreate_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                          input_file_id=uploaded.id, **kw(srv)))
        ended = run(retrieve(srv, batch.id))
        assert ended.status == "failed" and "duplicate custom_id" in ended.errors.data[0].message


def test_anthropic_message_batch_round_trip() -> None:
    with FakeLLMServer(always("A")) as srv:
        srv.batches.script(BatchScript(polls=1, end="expired", answered=2, errors={0: "429"}))
        status, batch = call(srv, "POST", "/v1/messages/batches", anthropic_requests(3))
        assert status == 200 and batch["processing_status"] == "in_progress"
        assert batch["request_counts"]["processing"] == 3 and batch["results_url"] is None
        status, early = call(srv, "GET", f"/v1/messages/batches/{batch['id']}/results")
        assert status == 400 and "has not ended" in early["error"]["message"]
        assert call(srv, "GET", f"/v1/messages/batches/{batch['id']}")[1]["processing_status"] == "in_progress"
        ended = call(srv, "GET", f"/v1/messages/batches/{batch['id']}")[1]
        assert ended["processing_status"] == "ended"
        assert ended["request_counts"] == {"processing": 0, "succeeded": 1, "errored": 1, "canceled": 0, "expired": 1}
        status, data = call(srv, "GET", f"/v1/messages/batches/{batch['id']}/results")
        results = {json.loads(line)["custom_id"]: json.loads(line)["result"] for line in data.decode().splitlines()}
        assert results["r0"]["type"] == "errored" and results["r0"]["error"]["error"]["type"] == "rate_limit_error"
        assert results["r1"]["type"] == "succeeded"
        assert results["r1"]["message"]["content"][0]["text"].endswith("Result: A")
        assert results["r2"] == {"type": "expired"}


def test_anthropic_rejects_bad_custom_ids_and_missing_max_tokens() -> None:
    with FakeLLMServer() as srv:
        body = anthropic_requests(1)
        body["requests"][0]["custom_id"] = "judge:abc:0"
        status, reply = call(srv, "POST", "/v1/messages/batches", body)
        assert status == 400 and "custom_id" in reply["error"]["message"]
        body = anthropic_requests(1)
        del body["requests"][0]["params"]["max_tokens"]
        assert call(srv, "POST", "/v1/messages/batches", body)[0] == 400
        assert srv.stats()["batches"].get("created", 0) == 0


def test_cancel_lost_reply_listing_and_http_faults() -> None:
    with FakeLLMServer() as srv:
        srv.batches.script(BatchScript(polls=50, lose_create_reply=True))
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            call(srv, "POST", "/v1/messages/batches", anthropic_requests(2))
        # The batch exists although its creation was never answered.
        listed = call(srv, "GET", "/v1/messages/batches?limit=10")[1]
        assert len(listed["data"]) == 1 and listed["data"][0]["request_counts"]["processing"] == 2
        batch_id = listed["data"][0]["id"]
        assert call(srv, "POST", f"/v1/messages/batches/{batch_id}/cancel")[1]["processing_status"] == "canceling"
        ended = call(srv, "GET", f"/v1/messages/batches/{batch_id}")[1]
        assert ended["request_counts"]["canceled"] == 1 and ended["request_counts"]["succeeded"] == 1
        srv.batches.push_http_faults(["503"])
        assert call(srv, "GET", f"/v1/messages/batches/{batch_id}")[0] == 503
        assert call(srv, "GET", f"/v1/messages/batches/{batch_id}")[0] == 200
        stats = srv.stats()["batches"]
        assert stats["lost_replies"] == 1 and stats["faults"] == 1 and stats["cancels"] == 1


def test_token_counter_option_sets_prompt_tokens_everywhere() -> None:
    def count(messages: list[dict[str, str]], model: str) -> int:
        return 1000 + len(messages)

    with FakeLLMServer(token_counter=count) as srv:
        reply = litellm.completion(model="openai/fake", api_base=srv.openai_base, api_key="sk-test",
                                   messages=[{"role": "user", "content": "hi"}], max_retries=0)
        assert reply.usage.prompt_tokens == 1001
        srv.batches.script(BatchScript(polls=0))
        batch_id = call(srv, "POST", "/v1/messages/batches", anthropic_requests(1))[1]["id"]
        call(srv, "GET", f"/v1/messages/batches/{batch_id}")
        line = call(srv, "GET", f"/v1/messages/batches/{batch_id}/results")[1]
        assert line["result"]["message"]["usage"]["input_tokens"] == 1001

"""Pieces of dry runs and batch mode that need no server: bodies, prices, token counts,
options, the ledger and its lease."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from prb_tasks.common.retry import RetryPolicy
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.judge.batch.bodies import BodyBuilder, _raw_body
from prb_tasks.judge.batch.driver import custom_id_for
from prb_tasks.judge.batch.ledger import Failure, Ledger
from prb_tasks.judge.batch.providers import AnthropicBatchAPI, anthropic_message_result
from prb_tasks.judge.configs import resolve_settings
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.judge.pricing import Pricer
from prb_tasks.judge.request import (
    ChatRequest,
    answer_profile,
    cache_key,
    request_digest,
)
from prb_tasks.judge.tokens import token_counter_for

DOCS = build_docs("Art_and_Entertainment", "both", source="sample")[:4]


def requests(**params: object) -> list[ChatRequest]:
    return [ChatRequest(messages=({"role": "system", "content": d["system_prompt"]},
                                  {"role": "user", "content": d["prompt"]}), **params)  # type: ignore[arg-type]
            for d in DOCS]


@pytest.mark.parametrize(("model", "params"), [
    ("openai/gpt-4.1", {"max_tokens": 512, "temperature": 0.0}),
    ("openai/gpt-5-mini", {"max_tokens": 4096, "reasoning_effort": "low"}),
    ("openai/o4-mini", {"max_tokens": 4096, "reasoning_effort": "medium"}),
    ("anthropic/claude-sonnet-4-5", {"max_tokens": 512, "temperature": 0.0}),
    ("anthropic/claude-sonnet-4-5", {"max_tokens": 4096, "reasoning_effort": "low"}),
])
def test_batch_bodies_equal_what_litellm_sends_for_each_request(model: str, params: dict) -> None:
    builder = BodyBuilder(model)
    for request in requests(**params):
        direct = _raw_body(model, [dict(m) for m in request.messages], request.params())
        assert builder.body(request) == direct
    # One build per shape, not per request.
    assert len(builder._shapes) == 1
    body = builder.body(requests(**params)[0])
    assert body["model"] == model.split("/", 1)[1]
    if model == "openai/gpt-5-mini":
        assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body
    if model.startswith("anthropic/"):
        assert body["system"][0]["text"] == DOCS[0]["system_prompt"] and body["max_tokens"] == params["max_tokens"]


def test_custom_ids_are_short_stable_and_valid_for_both_providers() -> None:
    request = requests(max_tokens=512)[0]
    key = cache_key(request_digest(request, "anthropic/claude-x", None), 3)
    custom = custom_id_for(key)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", custom) and custom == custom_id_for(key)
    assert custom != custom_id_for(cache_key(request_digest(request, "anthropic/claude-x", None), 4))


def test_batch_prices() -> None:
    listed = Pricer(resolve_settings({"model": "openai/gpt-4.1"}))
    assert listed.batch().source == "litellm batch price"
    assert listed.batch().input_per_token == pytest.approx(1e-6)
    user = Pricer(resolve_settings({"model": "openai/x", "api_base": "http://h/v1",
                                    "input_cost_per_mtok": 3, "output_cost_per_mtok": 10}))
    assert user.batch().input_per_token == pytest.approx(1.5e-6)
    assert user.batch().output_per_token == pytest.approx(5e-6)
    assert "50%" in user.batch().source
    assert Pricer(resolve_settings({"model": "openai/unknown-x", "api_base": "http://h/v1"})).batch() is None


def test_token_counters_say_when_they_approximate() -> None:
    messages = requests()[0].messages
    openai = token_counter_for("openai/gpt-4.1")
    assert openai.exact and "o200k_base" in openai.description
    claude = token_counter_for("anthropic/claude-sonnet-4-5")
    assert not claude.exact and "approximation" in claude.description
    local = token_counter_for("ollama_chat/qwen3:8b")
    assert not local.exact and "cl100k_base" in local.description
    counts = [c.count(messages) for c in (openai, claude, local)]
    assert all(300 < n < 2000 for n in counts)


def test_profile_depends_on_system_prompt_and_settings_not_on_the_case() -> None:
    a, b = requests(max_tokens=512)[:2]
    assert answer_profile(a, "m", None) == answer_profile(b, "m", None)
    assert answer_profile(a, "m", None) != answer_profile(requests(max_tokens=256)[0], "m", None)
    assert answer_profile(a, "m", None) != answer_profile(a, "m2", None)


@pytest.mark.parametrize(("args", "fragment"), [
    ({"model": "ollama_chat/qwen3:8b", "batch": True}, "works with OpenAI"),
    ({"model": "openai/gpt-4.1", "batch": True, "cache": "off"}, "needs cache=on"),
    ({"model": "openai/gpt-4.1", "batch": True, "max_cost": 5}, "max_cost cannot be enforced"),
    ({"model": "openai/gpt-4.1", "batch_wait": False}, "only used with batch=true"),
    ({"model": "openai/gpt-4.1", "batch": True, "batch_poll": 0}, "batch_poll"),
])
def test_batch_options_are_checked(args: dict, fragment: str) -> None:
    with pytest.raises(JudgeConfigError) as info:
        resolve_settings(args)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_anthropic_reply_parsing_matches_litellm_assembly() -> None:
    message = {"content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Result: "},
                           {"type": "text", "text": "B"}],
               "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 3},
               "stop_reason": "end_turn"}
    result = anthropic_message_result(message)
    assert result.text == "<think>hmm</think>\nResult: B" or result.text.endswith("Result: B")
    assert result.input_tokens == 15 and result.output_tokens == 3 and not result.refused
    assert anthropic_message_result({**message, "stop_reason": "refusal"}).refused
    api = AnthropicBatchAPI("http://h:1", "k", 5, RetryPolicy(0))
    assert api.url == "http://h:1/v1/messages/batches"
    error = api._item({"custom_id": "x", "result": {"type": "errored", "error": {
        "type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}}})
    assert error is not None and error.outcome == "error" and not error.error.retryable
    assert api._item({"custom_id": "x", "result": {"type": "expired"}}).outcome == "unfinished"


def test_ledger_jobs_failures_and_an_exclusive_lease(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    other = Ledger(tmp_path)
    job = ledger.new_job("openai", "openai/m", None, "MY_KEY_ENV", {"prb-1": "judge:a:0"})
    assert other.job(job.job_id).state == "submitting" and other.ids(job) == {"prb-1": "judge:a:0"}
    job.batch_id, job.state = "batch_1", "submitted"
    ledger.save(job)
    assert other.find("batch_1").job_id == job.job_id
    ledger.record_failure("judge:a:0", Failure(1, "server", "InternalServerError", "x", True))
    assert other.failure("judge:a:0").attempts == 1
    other.clear_failure("judge:a:0")
    assert ledger.failure("judge:a:0") is None

    async def hold(store: Ledger, name: str, log: list[str]) -> None:
        async with store.lease(wait=5):
            log.append(f"{name} in")
            await asyncio.sleep(0.2)
            log.append(f"{name} out")

    async def both() -> list[str]:
        log: list[str] = []
        await asyncio.gather(hold(ledger, "a", log), hold(other, "b", log))
        return log

    log = asyncio.run(both())
    # Never both inside at once.
    assert log in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])
    # The ledger names the key's variable, never a key.
    assert other.job(job.job_id).api_key_env == "MY_KEY_ENV"


def test_batch_key_comes_from_the_environment_and_a_missing_one_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from prb_tasks.judge.batch.providers import batch_key

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(JudgeConfigError, match="needs ANTHROPIC_API_KEY"):
        batch_key("anthropic", None, None)
    with pytest.raises(JudgeConfigError, match="needs MY_VAR"):
        batch_key("openai", "http://h/v1", "MY_VAR")
    assert batch_key("openai", "http://h/v1", None)  # a local server may check no key
    monkeypatch.setenv("MY_VAR", "sk-x-1234")
    assert batch_key("anthropic", None, "MY_VAR") == "sk-x-1234"

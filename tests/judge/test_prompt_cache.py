"""Provider prompt caching (issue 24): shared prefixes, breakpoints, cached tokens and their price."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.judge.client import LiteLLMClient
from prb_tasks.judge.pricing import Price, litellm_price
from prb_tasks.judge.prompt_cache import (
    PrefixIndex,
    cacheable_tokens,
    shared_prefix_lengths,
    with_breakpoint,
)
from prb_tasks.judge.request import ChatRequest
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.runner import run_cli

CACHED_PER_MTOK = 0.25


@pytest.mark.parametrize("variant", ["both", "profile", "oracle"])
def test_both_orders_share_everything_but_the_responses(variant: str) -> None:
    docs = build_docs("Art_and_Entertainment", variant, source="sample")
    pairs: dict[str, list[dict]] = {}
    for doc in docs:
        pairs.setdefault(doc["pair_key"], []).append(doc)
    assert pairs and all(len(both) == 2 for both in pairs.values())
    for first, second in pairs.values():
        assert first["system_prompt"] == second["system_prompt"]
        a, b = first["prompt"], second["prompt"]
        shared = shared_prefix_lengths([a, b])[0]
        # Everything before the first response (posts, aspects, question) is shared ...
        assert shared >= a.index("Response A:") + len("Response A:")
        # ... and the question and any posts lie inside the shared part.
        assert "Question from the person:" in a[:shared]
        if variant == "profile":
            assert "Post 1 (Category:" in a[:shared]


def test_prefix_helpers() -> None:
    texts = ["rules|posts|question|A1 B1", "rules|posts|question|B1 A1", "other"]
    assert shared_prefix_lengths(texts) == [len("rules|posts|question|"), len("rules|posts|question|"), 0]
    index = PrefixIndex()
    assert index.add(texts[0]) == 0 and index.add(texts[1]) == len("rules|posts|question|")
    # First of a pair writes, second reads; the unrelated request neither.
    share = round(len("rules|posts|question|") / len(texts[0]) * 100)
    assert cacheable_tokens(texts, [100, 100, 100], 50) == (share, share)
    assert cacheable_tokens(texts, [10, 10, 10], 50) == (0, 0)
    messages = ({"role": "system", "content": "s" * 400}, {"role": "user", "content": "u" * 4000 + "tail"})
    split = with_breakpoint(messages, 4000, 1024)
    assert split[-1]["content"] == [{"type": "text", "text": "u" * 4000, "cache_control": {"type": "ephemeral"}},
                                    {"type": "text", "text": "tail"}]
    assert split[0] == messages[0]
    assert with_breakpoint(messages, 4000, 2048) == [dict(m) for m in messages]  # too short for a Haiku model


def test_price_of_cached_tokens() -> None:
    price = Price(3e-6, 15e-6, "test", cached_input_per_token=0.3e-6, cache_write_per_token=3.75e-6)
    assert price.cost(1000, 10, cached_tokens=600) == pytest.approx(400 * 3e-6 + 600 * 0.3e-6 + 10 * 15e-6)
    assert price.cost(1000, 10, written_tokens=900) == pytest.approx(100 * 3e-6 + 900 * 3.75e-6 + 10 * 15e-6)
    assert price.cache_saving(600) == pytest.approx(600 * 2.7e-6)
    listed = litellm_price("anthropic/claude-sonnet-4-5")
    assert listed is not None and listed.cached_input_per_token is not None
    assert listed.cached_input_per_token < listed.input_per_token < listed.cache_write_per_token


def test_anthropic_breakpoint_through_litellm() -> None:
    shared = "word " * 1500 + "Response A:\n"
    with FakeLLMServer(prompt_cache_min=1024) as server:
        client = LiteLLMClient("anthropic/claude-sonnet-4-5", server.url, "sk-ant-test-not-real-0000", 30)

        async def both() -> list:
            return [await client.call(ChatRequest(
                messages=({"role": "system", "content": "rules"}, {"role": "user", "content": shared + tail}),
                max_tokens=20, shared_prefix=len(shared))) for tail in ("first", "second")]

        first, second = asyncio.run(both())
        body = server.requests[-1]["body"]
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert first.cache_write_tokens and not first.cached_input_tokens
    assert second.cached_input_tokens == first.cache_write_tokens and not second.cache_write_tokens
    # litellm's own cost of each reply agrees with our arithmetic on the listed rates.
    price = litellm_price("anthropic/claude-sonnet-4-5")
    assert price is not None
    for reply in (first, second):
        ours = price.cost(reply.input_tokens, reply.output_tokens, reply.cached_input_tokens, reply.cache_write_tokens)
        assert reply.provider_cost == pytest.approx(ours)


@pytest.mark.slow
def test_direct_run_reports_and_prices_cached_tokens(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer(prompt_cache_min=100, record_requests=False) as server:
        args = ["eval", "--model", "prb-judge", "--model_args",
                f"model=openai/fake,api_base={server.openai_base},cache_dir={cache},num_concurrent=4,"
                f"input_cost_per_mtok=1.0,output_cost_per_mtok=2.0,cached_input_cost_per_mtok={CACHED_PER_MTOK}",
                "--tasks", "personalized_rb_sample", "--output_path", str(tmp_path / "out")]
        proc = run_cli(args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    usage = json.loads(sorted((tmp_path / "out").rglob("usage_*.json"))[-1].read_text())
    tokens = usage["tokens"]
    assert 0 < tokens["cached_input"] < tokens["input"]
    expected = ((tokens["input"] - tokens["cached_input"]) * 1.0 + tokens["cached_input"] * CACHED_PER_MTOK
                + tokens["output"] * 2.0) / 1e6
    assert usage["cost"]["usd"] == pytest.approx(expected, abs=2e-6)
    assert usage["prompt_cache_saving_usd"] == pytest.approx(tokens["cached_input"] * (1.0 - CACHED_PER_MTOK) / 1e6,
                                                             abs=2e-6)
    assert f"provider prompt cache: {tokens['cached_input']:,} input tokens read" in proc.stdout
    info = run_cli(["cache", "info", "--cache-dir", str(cache)], cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    assert (f"{tokens['cached_input']:,} of {tokens['input']:,} input tokens were read "
            "from the provider's prompt cache") in info.stdout

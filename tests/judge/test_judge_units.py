"""Unit tests of the prb-judge building blocks (no network, real diskcache/SQLite)."""

from __future__ import annotations

import asyncio
import os
import pickle
import random
import time
from pathlib import Path

import diskcache
import pytest

from prb_tasks.common.retry import RetryPolicy, parse_retry_after
from prb_tasks.judge.answer_cache import (
    CachedAnswer,
    JudgeCache,
    UnsafeCacheEntry,
    cache_info,
    clear_cache,
    parse_age,
)
from prb_tasks.judge.client import sanitize
from prb_tasks.judge.configs import list_configs, load_config, resolve_settings
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.judge.limiter import AdaptiveLimiter, Bucket
from prb_tasks.judge.request import ChatRequest, cache_key, request_digest
from prb_tasks.judge.usage import UsageTracker

MSGS = ({"role": "system", "content": "judge"}, {"role": "user", "content": "A or B?"})


# --------------------------------------------------------------------------- options and configs


def test_unknown_model_arg_is_named() -> None:
    with pytest.raises(JudgeConfigError, match="unknown key 'num_concurent'"):
        resolve_settings({"model": "openai/x", "num_concurent": 4})


def test_raw_api_key_is_rejected_with_a_pointer_to_api_key_env() -> None:
    with pytest.raises(JudgeConfigError, match="api_key_env") as info:
        resolve_settings({"model": "openai/x", "api_key": "sk-secret-value"})
    assert "sk-secret-value" not in str(info.value)
    assert "\n" not in str(info.value)


def test_harness_keys_are_accepted_and_config_values_are_overridden() -> None:
    s = resolve_settings({"config": "gpt-4o-mini", "num_concurrent": 3, "batch_size": 1, "device": None,
                          "max_batch_size": None})
    assert s.model == "openai/gpt-4o-mini" and s.num_concurrent == 3


def test_missing_model_lists_bundled_configs() -> None:
    with pytest.raises(JudgeConfigError, match="gpt-4o-mini"):
        resolve_settings({})


def test_prices_come_in_pairs() -> None:
    with pytest.raises(JudgeConfigError, match="both"):
        resolve_settings({"model": "openai/x", "input_cost_per_mtok": 1.0})


def test_missing_key_variable_is_reported() -> None:
    os.environ.pop("PRB_UNSET_VARIABLE", None)
    with pytest.raises(JudgeConfigError, match="PRB_UNSET_VARIABLE"):
        resolve_settings({"model": "openai/x", "api_key_env": "PRB_UNSET_VARIABLE"})


def test_direct_transport_needs_an_openai_compatible_server() -> None:
    with pytest.raises(JudgeConfigError, match="transport=direct"):
        resolve_settings({"model": "anthropic/claude-haiku-4-5", "transport": "direct"})
    s = resolve_settings({"model": "openai/m", "api_base": "http://127.0.0.1:1/v1/"})
    assert s.use_direct() and s.api_base == "http://127.0.0.1:1/v1"
    assert not resolve_settings({"model": "openai/m"}).use_direct()
    assert not resolve_settings({"model": "openai/m", "api_base": "http://x/v1", "transport": "litellm"}).use_direct()


def test_config_file_unknown_key_names_key_and_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("model: openai/x\ntemprature: 0.3\n")
    with pytest.raises(JudgeConfigError, match=r"mine.yaml.*unknown key 'temprature'"):
        resolve_settings({"config": str(path)})
    path.write_text("model: openai/x\napi_key: sk-nope\n")
    with pytest.raises(JudgeConfigError, match="api_key_env"):
        resolve_settings({"config": str(path)})


def test_unknown_config_name() -> None:
    with pytest.raises(JudgeConfigError, match="unknown judge config 'nope'"):
        resolve_settings({"config": "nope"})


def test_bundled_configs_validate_and_cover_the_judge_families() -> None:
    configs = {name: load_config(name) for name in list_configs()}
    models = {c["model"] for c in configs.values()}
    assert "openai/gpt-4o-mini" in models
    assert any(m.startswith(("openai/gpt-4.1", "openai/gpt-5")) for m in models)
    assert any(m.startswith("anthropic/") and "sonnet" in m for m in models)
    assert any(m.startswith("anthropic/") and "haiku" in m for m in models)
    assert any(m.startswith("gemini/") and "flash" in m for m in models)
    assert any(m.startswith("ollama_chat/") for m in models)
    local = [c for c in configs.values() if c["model"].startswith("openai/") and c.get("api_base")]
    assert local, "a vLLM/OpenAI-compatible local config"
    reasoning = [c for c in configs.values() if c.get("temperature") == "omit"]
    assert reasoning and all(c["max_tokens"] > 512 and c.get("reasoning_effort") for c in reasoning)
    for name in configs:
        resolve_settings({"config": name})  # every bundled config is a complete setting


# --------------------------------------------------------------------------- request identity


def test_cache_key_covers_everything_that_changes_the_answer() -> None:
    base = ChatRequest(MSGS, max_tokens=512, temperature=0.0)

    def key(req: ChatRequest = base, model: str = "openai/a", api_base: str | None = None, n: int = 0) -> str:
        return cache_key(request_digest(req, model, api_base), n)

    variants = {
        key(),
        key(model="openai/b"),
        key(api_base="http://127.0.0.1:9/v1"),
        key(ChatRequest(MSGS[:1] + ({"role": "user", "content": "A or B? "},), max_tokens=512, temperature=0.0)),
        key(ChatRequest(MSGS, max_tokens=512, temperature=0.5)),
        key(ChatRequest(MSGS, max_tokens=513, temperature=0.0)),
        key(ChatRequest(MSGS, max_tokens=512, temperature=0.0, top_p=0.9)),
        key(ChatRequest(MSGS, max_tokens=512, temperature=0.0, seed=1)),
        key(ChatRequest(MSGS, max_tokens=512, temperature=0.0, stop=("\n",))),
        key(ChatRequest(MSGS, max_tokens=512, temperature=0.0, reasoning_effort="low")),
        key(ChatRequest(MSGS, max_tokens=512, temperature=0.0, response_format={"type": "json_object"})),
        key(ChatRequest(MSGS, max_tokens=512)),  # temperature not sent
        key(n=1),
    }
    assert len(variants) == 13
    assert key() == key(ChatRequest(tuple(dict(m) for m in MSGS), max_tokens=512, temperature=0.0))


# --------------------------------------------------------------------------- cache


def _answer(text: str = "Result: A", cost: float | None = 0.001) -> CachedAnswer:
    return CachedAnswer(text=text, model="openai/a", input_tokens=10, output_tokens=3, cost=cost,
                        latency=0.1, created=time.time())


def test_cache_round_trip_and_modes(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path, "on")
    cache.put("k", _answer())
    assert cache.get("k") == _answer().__class__(**{**_answer().__dict__, "created": cache.get("k").created})
    big = "x" * 100_000 + " Result: B"  # stored in a side file by diskcache
    cache.put("big", _answer(big))
    assert cache.get("big").text == big
    cache.close()

    read_only = JudgeCache(tmp_path, "read")
    read_only.put("new", _answer())
    assert read_only.get("new") is None and read_only.get("k") is not None
    read_only.close()

    write = JudgeCache(tmp_path, "write")
    assert write.get("k") is None  # never reads
    write.put("k", _answer("Result: B"))  # keeps the stored answer
    write.close()
    refresh = JudgeCache(tmp_path, "refresh")
    refresh.put("big", _answer("Result: B"))  # replaces it
    refresh.close()
    again = JudgeCache(tmp_path, "on")
    assert again.get("k").text == "Result: A" and again.get("big").text == "Result: B"
    again.close()
    off = JudgeCache(tmp_path / "never", "off")
    off.put("k", _answer())
    assert off.get("k") is None and not (tmp_path / "never").exists()


class _Exploit:
    """Unpickling this would create a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


def test_planted_pickle_is_refused_not_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    folder = tmp_path / "cache"
    # Plant entries the way an attacker with write access could: stock diskcache pickles them.
    stock = diskcache.Cache(str(folder))
    stock.set("judge:planted:0", _Exploit(marker))
    stock.set("judge:bytes:0", b"Result: A")
    stock.set("judge:text:0", '{"not": "an answer"}')
    stock.set(("tuple", "key"), "Result: A")  # a pickled key
    stock.close()
    assert not marker.exists()

    cache = JudgeCache(folder, "on")
    assert cache.get("judge:planted:0") is None
    assert cache.get("judge:bytes:0") is None
    assert cache.get("judge:text:0") is None
    assert cache.refused == 3
    assert not marker.exists()
    # Our own writes still work next to the planted entries, and overwrite them.
    cache.put("judge:planted:0", _answer())
    assert cache.get("judge:planted:0").text == "Result: A"
    cache.close()

    info = cache_info(folder)
    assert info.entries == 4 and info.unreadable == 3
    assert not marker.exists()
    with pytest.raises(UnsafeCacheEntry):
        from prb_tasks.judge.answer_cache import JsonOnlyDisk

        JsonOnlyDisk(str(folder)).fetch(4, None, pickle.dumps(_Exploit(marker)), False)
    assert not marker.exists()
    assert clear_cache(folder) == 4


def test_cache_info_and_clear_older_than(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path, "on")
    for i in range(3):
        cache.put(f"k{i}", _answer(cost=0.5))
    cache.put("free", CachedAnswer(text="Result: A", model="openai/b", cost=None))
    cache.close()
    info = cache_info(tmp_path)
    assert info.entries == 4 and info.unreadable == 0
    assert info.by_model["openai/a"] == {"entries": 3, "cost": 1.5, "unpriced": 0, "input_tokens": 30,
                                         "cached_input_tokens": 0}
    assert info.by_model["openai/b"]["unpriced"] == 1
    assert clear_cache(tmp_path, older_than=3600) == 0
    time.sleep(0.05)
    assert clear_cache(tmp_path, older_than=0.01) == 4
    assert cache_info(tmp_path).entries == 0
    assert parse_age("30d") == 30 * 86400 and parse_age("12h") == 43200 and parse_age("2") == 172800
    with pytest.raises(ValueError):
        parse_age("soon")


# --------------------------------------------------------------------------- retry, limiter


def test_backoff_grows_with_jitter_and_honours_retry_after() -> None:
    policy = RetryPolicy(max_retries=3, base=1.0, cap=8.0, rng=random.Random(0))
    for failures, (lo, hi) in {1: (0.5, 1.0), 2: (1.0, 2.0), 3: (2.0, 4.0), 6: (4.0, 8.0)}.items():
        delays = [policy.delay(failures) for _ in range(50)]
        assert all(lo <= d <= hi for d in delays) and len(set(delays)) > 1
    assert 5.0 <= policy.delay(1, retry_after=5.0) <= 5.5  # the server's wish wins, both ways
    assert 0.1 <= policy.delay(4, retry_after=0.1) <= 0.11
    assert policy.should_retry(3) and not policy.should_retry(4)


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "1.5"}) == 1.5
    assert parse_retry_after({}) is None and parse_retry_after(None) is None
    from email.utils import formatdate

    assert 0 < parse_retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)}) <= 31


@pytest.mark.parametrize("where", ["litellm_response_headers", "response", "both", "neither"])
def test_retry_after_is_read_wherever_the_litellm_release_puts_it(where: str) -> None:
    """litellm <= 1.106 kept the server's headers on ``litellm_response_headers`` only;
    1.110 fills ``exc.response`` as well and leaves the attribute unset on errors it builds
    itself. The wait prb honours must be the server's in every case."""
    import httpx

    from prb_tasks.judge.client import classify_litellm, import_litellm

    litellm = import_litellm()
    on_response = {"retry-after": "7"} if where in ("response", "both") else {}
    exc = litellm.RateLimitError("slow down", "openai", "m", response=httpx.Response(
        429, headers=on_response, request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")))
    if where in ("litellm_response_headers", "both"):
        exc.litellm_response_headers = httpx.Headers({"retry-after-ms": "7000"})
    err = classify_litellm(exc)
    assert err.kind == "rate_limit" and err.retryable
    assert err.retry_after == (None if where == "neither" else 7.0)


def test_bucket_paces_to_the_rate() -> None:
    now = [0.0]
    bucket = Bucket(60.0, clock=lambda: now[0])  # 1 per second, 10 s of burst
    for _ in range(10):
        assert bucket.wait_time(1) == 0
        bucket.take(1)
    assert bucket.wait_time(1) == pytest.approx(1.0)
    now[0] += 1.0
    assert bucket.wait_time(1) == 0
    big = Bucket(600.0, clock=lambda: now[0])  # a request larger than the bucket still goes
    assert big.wait_time(10_000) == 0


def test_limiter_halves_on_rate_limit_and_recovers() -> None:
    now = [0.0]
    limiter = AdaptiveLimiter(16, cooldown=1.0, clock=lambda: now[0])
    for _ in range(6):  # one burst of 429s halves once
        limiter.on_rate_limited()
    assert limiter.slots == 8 and limiter.decreases == 1
    now[0] += 2
    limiter.on_rate_limited()
    assert limiter.slots == 4 and limiter.lowest == 4
    for _ in range(200):
        limiter.on_success()
    assert limiter.slots == 16


def test_limiter_ignores_stray_rate_limits() -> None:
    rng = random.Random(4)
    stray = AdaptiveLimiter(64, cooldown=0.0)
    for _ in range(2000):
        stray.on_rate_limited() if rng.random() < 0.05 else stray.on_success()
    assert stray.decreases == 0 and stray.slots == 64
    overloaded = AdaptiveLimiter(64, cooldown=0.0)
    for _ in range(200):
        overloaded.on_rate_limited() if rng.random() < 0.5 else overloaded.on_success()
    assert overloaded.decreases > 0 and overloaded.lowest < 64


def test_limiter_caps_in_flight_and_serves_in_order() -> None:
    async def scenario() -> list[int]:
        limiter = AdaptiveLimiter(2)
        order: list[int] = []
        peak = [0]

        async def job(i: int) -> None:
            permit = await limiter.acquire()
            peak[0] = max(peak[0], limiter.in_flight)
            order.append(i)
            await asyncio.sleep(0.01)
            limiter.release(permit)

        await asyncio.gather(*(job(i) for i in range(8)))
        assert peak[0] == 2
        return order

    assert asyncio.run(scenario()) == list(range(8))


def test_limiter_rpm_spaces_requests() -> None:
    async def scenario() -> float:
        limiter = AdaptiveLimiter(8, rpm=600)  # 10/s, burst 100
        limiter._rpm.level = 1  # type: ignore[union-attr]  # start with an almost empty bucket
        started = time.monotonic()
        for _ in range(4):
            limiter.release(await limiter.acquire())
        return time.monotonic() - started

    assert 0.25 <= asyncio.run(scenario()) < 1.0


# --------------------------------------------------------------------------- secrets, usage


def test_sanitize_removes_keys_and_newlines() -> None:
    text = "Incorrect API key provided: sk-proj-ABCDEFGHIJKLMNOP.\nAuthorization: Bearer abc.def-123"
    clean = sanitize(text, secrets=("abc.def-123",))
    assert "ABCDEFGHIJKLMNOP" not in clean and "abc.def-123" not in clean and "\n" not in clean
    assert len(sanitize("x" * 1000)) == 200


def test_unknown_cost_is_reported_as_unknown_not_zero() -> None:
    usage = UsageTracker(model="openai/x", transport="direct", judgments=2)
    usage.call(None, 0.1, 10, 2, None)
    usage.call(None, 0.2, 10, 2, None)
    summary = usage.summary()
    assert summary["cost"] == {"usd": 0.0, "unpriced_calls": 2}
    assert "cost unknown" in usage.render()
    usage.call(0.5, 0.3, 1, 1, 0)
    assert "$0.5000 (+2 unpriced)" in usage.render()


def test_a_plainly_missing_key_is_found_when_the_judge_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    from prb_tasks.judge.keys import missing_key_line

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    line = missing_key_line(resolve_settings({"model": "openai/gpt-4o-mini"}))
    assert line is not None and line.startswith("prb-judge: openai/gpt-4o-mini needs OPENAI_API_KEY in the "
                                                "environment") and "nothing was sent" in line
    assert "ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN" in missing_key_line(resolve_settings({"model": "anthropic/x"}))
    # Not flagged: a local OpenAI-compatible server, a provider prb does not know, credentials from files.
    assert missing_key_line(resolve_settings({"model": "openai/m", "api_base": "http://127.0.0.1:1/v1"})) is None
    assert missing_key_line(resolve_settings({"model": "someprovider/m"})) is None
    assert missing_key_line(resolve_settings({"model": "vertex_ai/gemini-pro"})) is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-prb-test-0000")
    assert missing_key_line(resolve_settings({"model": "openai/gpt-4o-mini"})) is None
    monkeypatch.delenv("OPENAI_API_KEY")
    from prb_tasks.judge.model import JudgeLM

    with pytest.raises(JudgeConfigError, match="needs OPENAI_API_KEY"):
        JudgeLM(model="openai/gpt-4o-mini")


def test_prb_eval_stops_at_start_up_without_the_key(tmp_path: Path) -> None:
    from tests.runner import run_cli

    proc = run_cli(["eval", "--model", "prb-judge", "--model_args", "model=openai/gpt-4o-mini",
                    "--tasks", "personalized_rb_sample"], cwd=tmp_path, env={"OPENAI_API_KEY": ""})
    assert proc.returncode == 2
    # Before lm-eval started (it logs the tasks it selected first): one line, nothing loaded.
    assert proc.stderr.strip().splitlines() == [
        "prb-judge: openai/gpt-4o-mini needs OPENAI_API_KEY in the environment (or api_key_env=NAME naming the "
        "variable that holds the key); export it and run again (nothing was sent; a re-run answered wholly from "
        "the cache needs it set too)"], proc.stderr

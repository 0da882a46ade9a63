"""A server that accepts connections but never answers, and one that hangs now and then.

A frozen server must stop the run (one line, exit 3, results written, resumable) within
about two ``timeout``s of its freezing, at any point of the run; a burst of timeouts lowers the
concurrency only while it lasts; a request that hangs while the others are answered
does not hold a slot (real sockets, the fake server's frozen mode)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.judge.health import EndpointWatch
from prb_tasks.judge.client import CallError
from prb_tasks.judge.limiter import AdaptiveLimiter
from prb_tasks.judge.usage import take_last_summary
from prb_tasks.scoring.verdict import SKIPPED_MARK
from prb_tasks.testing.fake_server import FakeLLMServer, always
from tests.runner import metric, read_results
from tests.test_judge_e2e import N, PERFECT, TASK, chosen_policy, eval_args, group_metrics, usage_of
from tests.test_judge_e2e_reliability import lines, popen
from tests.test_judge_model import DOCS, judge, letters, requests_for
from tests.test_judge_reliability import KEY

TIMEOUT = 2.0


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


def timed_out() -> CallError:
    return CallError("timeout", "Timeout", "no reply within 2s", retryable=True)


def test_timeouts_stop_the_run_only_once_nothing_has_answered_for_two_timeouts() -> None:
    now = [0.0]
    watch = EndpointWatch("openai/x", stop_after_timeouts=3, timeout=2.0, clock=lambda: now[0])
    now[0] = 3.9
    assert [watch.failure(timed_out(), 1, False) for _ in range(5)] == [None] * 5  # nothing for 3.9 s only
    now[0] = 4.0
    halt = watch.failure(timed_out(), 1, False)
    assert halt is not None and halt.kind == "unresponsive" and "6 requests in a row" in halt.reason
    watch.success()  # any reply starts the count again
    now[0] = 10.0
    assert [watch.failure(timed_out(), 1, False) for _ in range(2)] == [None, None]
    off = EndpointWatch("openai/x", stop_after_timeouts=0, timeout=2.0, clock=lambda: now[0])
    now[0] = 100.0
    assert all(off.failure(timed_out(), 1, False) is None for _ in range(50))


def test_a_server_freezing_mid_run_stops_within_two_timeouts_and_a_rerun_resumes(tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    with FakeLLMServer(chosen_policy(), freeze_after=20, record_requests=False) as srv:
        proc = popen(tmp_path, eval_args(srv, cache, out, f"num_concurrent=4,timeout={TIMEOUT:g}"))
        while not srv.frozen and proc.poll() is None:
            time.sleep(0.02)
        froze = time.monotonic()
        _, stderr = proc.communicate(timeout=300)
        after_freeze = time.monotonic() - froze
        sent = srv.stats()["total_requests"]
        port = srv.port
    assert proc.returncode == 3, stderr[-2000:]
    # Before: every judgment left waited timeout for each of its 7 attempts (~50 s here,
    # 55 hours at the default timeout=120). Now: about two timeouts, plus writing results.
    assert after_freeze < 2 * TIMEOUT + 12, after_freeze
    last = lines(stderr)[-1]
    assert last.startswith("prb eval: the judge stopped early (openai/fake at http://127.0.0.1:")
    assert "requests in a row got no reply within timeout=2 s" in last and "once the server answers again" in last
    assert "Traceback" not in stderr
    usage = usage_of(out)
    assert usage["stopped_kind"] == "unresponsive" and usage["skipped"] > 0
    kept = usage["answers_stored"]
    assert kept == 20 and sent - kept <= 6 * 4  # after the freeze: a few rounds, not every retry of every judgment
    assert metric(read_results(out), TASK, "skip_rate") > 0.3
    with FakeLLMServer(chosen_policy(), port=port, record_requests=False) as srv:
        resumed = popen(tmp_path, eval_args(srv, cache, tmp_path / "resumed"))
        _, err = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, err[-2000:]
        assert srv.stats()["total_requests"] == N - kept
    assert group_metrics(tmp_path / "resumed") == PERFECT


def test_a_server_frozen_from_the_start_stops_too(tmp_path: Path) -> None:
    with FakeLLMServer(always("A"), freeze_after=0) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=4, timeout=0.5)
        out = lm.generate_until(requests_for(lm, DOCS[:40]))
        elapsed = time.time() - srv.stats()["first_request_at"]
    assert elapsed < 4 * 0.5 + 2, elapsed
    assert all(o == f"{SKIPPED_MARK} endpoint not answering" for o in out)
    assert take_last_summary()["stopped_kind"] == "unresponsive"


def test_concurrency_is_back_to_its_limit_after_a_burst_of_timeouts(tmp_path: Path) -> None:
    # The first six requests hang past the timeout; the rest are answered in 0.05 s.
    with FakeLLMServer(always("B"), fault_script=["timeout"] * 6, hang_seconds=30, latency=0.05) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=8, timeout=0.3)
        out = lm.generate_until(requests_for(lm, DOCS))
    summary = take_last_summary()
    assert letters(out) == ["B"] * len(DOCS)
    assert summary["failed_attempts_by_kind"]["timeout"] == 6
    assert summary["lowest_concurrency"] <= 4 and summary["final_concurrency"] == 8


def test_a_request_that_hangs_while_others_are_answered_gives_its_slot_back() -> None:
    async def scenario() -> tuple[int, int, bool]:
        now = [0.0]
        limiter = AdaptiveLimiter(2, stall_factor=4.0, stall_floor=0.05, clock=lambda: now[0])
        for _ in range(AdaptiveLimiter.MIN_LATENCIES):
            limiter.on_success(0.001)
        hung = await limiter.acquire()
        now[0] = 0.04
        busy = await limiter.acquire()
        now[0] = 0.06
        # Both slots are taken; the one in flight for 0.06 s (> 0.05) is set aside and a third goes out.
        third = await asyncio.wait_for(limiter.acquire(), 2)
        assert hung.stalled and not busy.stalled and not third.stalled
        set_aside = limiter.set_aside
        limiter.on_timeout(hung)  # its timeout is not congestion: the limit stays
        slots = limiter.slots
        limiter.release(hung)
        limiter.release(busy)
        limiter.release(third)
        return set_aside, slots, limiter.in_flight == 0 and limiter.stalled == 0

    assert asyncio.run(scenario()) == (1, 2, True)


def test_no_request_is_set_aside_before_replies_say_what_usual_is() -> None:
    async def scenario() -> bool:
        limiter = AdaptiveLimiter(1, stall_floor=0.01)
        await limiter.acquire()
        try:
            await asyncio.wait_for(limiter.acquire(), 0.3)
        except asyncio.TimeoutError:
            return True
        return False

    assert asyncio.run(scenario())


def test_the_fake_server_frozen_mode_holds_requests_until_thawed() -> None:
    import urllib.error
    import urllib.request

    body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": "hi"}]}).encode()
    with FakeLLMServer(always("A"), freeze_after=1) as srv:
        def post(timeout: float) -> Any:
            request = urllib.request.Request(f"{srv.openai_base}/chat/completions", data=body,
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return json.loads(reply.read())

        assert post(5)["choices"][0]["message"]["content"].endswith("Result: A")
        with pytest.raises((TimeoutError, urllib.error.URLError)):
            post(0.5)
        assert srv.frozen
        srv.thaw()
        assert not srv.frozen and post(5)["choices"][0]["message"]["content"].endswith("Result: A")
        assert srv.stats()["total_requests"] == 3

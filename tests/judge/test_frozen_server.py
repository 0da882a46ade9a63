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

from prb_tasks.judge.client import CallError
from prb_tasks.judge.health import EndpointWatch
from prb_tasks.judge.limiter import AdaptiveLimiter
from prb_tasks.judge.usage import take_last_summary
from prb_tasks.replies.verdict import SKIPPED_MARK
from prb_tasks.testing.fake_server import FakeLLMServer, always
from tests.e2e.test_judge_e2e import PERFECT, TASK, N, chosen_policy, eval_args, group_metrics, usage_of
from tests.e2e.test_judge_e2e_reliability import lines, popen
from tests.judge.test_judge_model import DOCS, judge, letters, requests_for
from tests.judge.test_judge_reliability import KEY
from tests.runner import metric, read_results
from tests.watchdog import communicate_watched

TIMEOUT = 2.0


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


def timed_out() -> CallError:
    return CallError("timeout", "Timeout", "no reply within 2s", retryable=True)


def test_timeouts_stop_the_run_only_once_nothing_has_answered_for_two_timeouts() -> None:
    now = [0.0]
    watch = EndpointWatch("openai/x", stop_after_timeouts=3, timeout=2.0, clock=lambda: now[0])
    now[0] = 2.0  # the requests sent at the start time out together
    assert [watch.failure(timed_out(), 1, False) for _ in range(3)] == [None] * 3
    now[0] = 3.9
    assert [watch.failure(timed_out(), 1, False) for _ in range(2)] == [None] * 2  # nothing for 3.9 s only
    now[0] = 4.0
    halt = watch.failure(timed_out(), 1, False)
    assert halt is not None and halt.kind == "unresponsive" and "6 requests in a row" in halt.reason
    watch.success()  # any reply starts the count again
    now[0] = 10.0
    assert [watch.failure(timed_out(), 1, False) for _ in range(2)] == [None, None]
    off = EndpointWatch("openai/x", stop_after_timeouts=0, timeout=2.0, clock=lambda: now[0])
    now[0] = 100.0
    assert all(off.failure(timed_out(), 1, False) is None for _ in range(50))


def test_a_few_pauses_between_replies_never_stop_but_a_sustained_outage_does() -> None:
    # The audit's case: timeout 2 s, three 2.5 s pauses 1 s apart; each pause times out a
    # burst of requests and the chains of retries leave up to ~6 s without a reply.
    now = [0.0]
    watch = EndpointWatch("openai/x", stop_after_timeouts=10, timeout=2.0, stop_after_silence=30.0,
                          clock=lambda: now[0])
    old_rule = EndpointWatch("openai/x", stop_after_timeouts=10, timeout=2.0, clock=lambda: now[0])
    old_halts = []
    for start in (10.0, 20.0, 30.0):
        for w in (watch, old_rule):
            now[0] = start
            w.success()
        for step in range(12):  # 2 s after the pause began, then retries held by the next pause
            now[0] = start + 2.0 + step * 0.4
            assert watch.failure(timed_out(), 1, False) is None
            old_halts.append(old_rule.failure(timed_out(), 1, False))
    assert any(old_halts)  # the rule before: "nothing answered for 5 s" stopped the run
    # A server that froze for good at 40 s: no stop before 30 s of silence, then one.
    now[0] = 40.0
    watch.success()
    halts = []
    while now[0] < 80.0 and not halts:
        now[0] += 0.5
        if now[0] >= 42.0:
            halt = watch.failure(timed_out(), 1, False)
            if halt is not None:
                halts.append((now[0], halt))
    assert halts and 70.0 <= halts[0][0] <= 72.0, halts
    assert "nothing answered for 30 s" in halts[0][1].reason and "stop_after_silence=30" in halts[0][1].reason
    # A long timeout keeps its own bound: twice timeout when that is longer than the floor.
    assert EndpointWatch("x", timeout=120.0, stop_after_silence=30.0).needed_silence == 240.0


def test_an_idle_stretch_of_the_run_is_not_counted_as_silence() -> None:
    now = [0.0]
    watch = EndpointWatch("openai/x", stop_after_timeouts=3, timeout=2.0, clock=lambda: now[0])
    watch.success()
    now[0] = 100.0  # nothing was sent for 98 s (another task's documents were being built)
    now[0] = 102.0
    assert [watch.failure(timed_out(), 1, False) for _ in range(5)] == [None] * 5  # an outage of 2 s only
    now[0] = 104.0
    assert watch.failure(timed_out(), 1, False) is not None


@pytest.mark.slow
def test_a_server_freezing_mid_run_stops_within_two_timeouts_and_a_rerun_resumes(tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    with FakeLLMServer(chosen_policy(), freeze_after=20, record_requests=False) as srv:
        proc = popen(tmp_path, eval_args(srv, cache, out,
                                         f"num_concurrent=4,timeout={TIMEOUT:g},stop_after_silence=0"))
        while not srv.frozen and proc.poll() is None:
            time.sleep(0.02)
        _, stderr = communicate_watched(proc)
        sent = srv.stats()["total_requests"]
        port = srv.port
    assert proc.returncode == 3, stderr[-2000:]
    # Before: every judgment left waited timeout for each of its 7 attempts (~50 s here,
    # 55 hours at the default timeout=120). Now: about two timeouts. Counted in requests below,
    # not in seconds (three test workers on two loaded cores once took 22.6 s for it).
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
        _, err = communicate_watched(resumed)
        assert resumed.returncode == 0, err[-2000:]
        assert srv.stats()["total_requests"] == N - kept
    assert group_metrics(tmp_path / "resumed") == PERFECT


def test_a_server_frozen_from_the_start_stops_too(tmp_path: Path) -> None:
    with FakeLLMServer(always("A"), freeze_after=0) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=4, timeout=0.5, stop_after_silence=3)
        out = lm.generate_until(requests_for(lm, DOCS[:40]))
        elapsed = time.time() - srv.stats()["first_request_at"]
    # stop_after_silence, then the next timeout (plus room for a loaded machine); retrying
    # every judgment instead would take 40 x 7 x 0.5 / 4 = 35 s
    assert 3 <= elapsed < 3 + 0.5 + 4.5, elapsed
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


@pytest.mark.slow  # three pauses of 2.5 s and the run around them (~20 s)
def test_a_server_pausing_three_times_does_not_stop_the_run(tmp_path: Path) -> None:
    # The fake server's "timeout" fault holds every request that arrives during a pause
    # for 2.5 s (longer than timeout=2); between the pauses it answers at once.
    docs = [dict(d, prompt=f"{d['prompt']} #{i}") for i, d in enumerate(DOCS * 4)]
    with FakeLLMServer(always("A"), hang_seconds=2.5, latency=0.01, record_requests=False) as srv:
        def pauses() -> None:
            while srv.stats()["total_requests"] == 0:
                time.sleep(0.005)
            for _ in range(3):
                srv.set_faults({"timeout": 1.0})
                time.sleep(2.5)
                srv.set_faults({})
                time.sleep(1.0)

        import threading

        pauser = threading.Thread(target=pauses, daemon=True)
        pauser.start()
        lm = judge(srv, tmp_path, "direct", timeout=TIMEOUT, num_concurrent=16, backoff_base=1.0,
                   backoff_max=60.0)
        out = lm.generate_until(requests_for(lm, docs))
        pauser.join(timeout=30)
        faults = srv.stats()["faults"]
    summary = take_last_summary()
    assert summary.get("stopped_kind") is None, summary  # before: "nothing answered for 4 s", exit 3
    assert letters(out) == ["A"] * len(docs)
    assert faults.get("timeout", 0) >= 10 and summary["failed_attempts_by_kind"]["timeout"] >= 10


def test_the_timeout_note_says_what_stops_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 48 item 7: it said "10 in a row stop the run", but a stop also needs an outage of
    # max(stop_after_silence, 2 x timeout) seconds with nothing answering.
    with FakeLLMServer(always("B"), fault_script=["timeout"], hang_seconds=30) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=2, timeout=0.3, stop_after_timeouts=10,
                   stop_after_silence=45)
        lm.generate_until(requests_for(lm, DOCS[:2]))
    note = [line for line in capsys.readouterr().err.splitlines() if "got no reply within timeout=" in line]
    assert len(note) == 1, note
    assert "10 in a row with no reply at all for 45 s stop the run" in note[0], note[0]

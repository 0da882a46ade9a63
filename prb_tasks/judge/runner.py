"""Run all judge requests of an lm-eval run concurrently, in one pool.

lm-eval hands every ``generate_until`` request of a run (all subtasks) to one
``generate_until`` call; they are all scheduled here at once, first come first
served, under one :class:`~prb_tasks.judge.limiter.AdaptiveLimiter`, and the answers
come back in request order.

Per request: cache lookup -> wait for a slot -> call -> on success store the answer at
once (so a killed run loses only what was in flight) -> on a transient failure back
off and retry -> after ``max_retries`` the judgment becomes an error outcome. A
provider answer meaning "every call will fail" (bad key, unknown model, malformed
request) stops the whole run immediately.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from tqdm import tqdm

from prb_tasks.judge.cache import CachedAnswer, JudgeCache
from prb_tasks.judge.client import CallError, ChatClient
from prb_tasks.judge.errors import JudgeFatalError
from prb_tasks.judge.limiter import AdaptiveLimiter, Permit
from prb_tasks.judge.options import JudgeSettings
from prb_tasks.judge.pricing import Pricer
from prb_tasks.judge.request import ChatRequest, answer_profile, cache_key, request_digest
from prb_tasks.retry import RetryPolicy
from prb_tasks.judge.usage import UsageTracker
from prb_tasks.scoring.verdict import ERROR_MARK, SKIPPED_MARK, parse_verdict

T = TypeVar("T")

# Stop when this many judgments in a row ended in an error before any call succeeded:
# the setup is broken, and the remaining thousands would fail the same way.
BREAKER_THRESHOLD = 20

REASK_SEPARATOR = "\n\n[re-ask] "


# --------------------------------------------------------------------------- event loop

_loop_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    """One long-lived event loop per process, in a daemon thread.

    lm-eval calls us synchronously (maybe from inside someone's running loop, e.g. a
    notebook), and litellm keeps HTTP clients bound to the loop that created them, so
    every run uses this same loop rather than a fresh ``asyncio.run``.
    """
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="prb-judge-loop", daemon=True)
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run a coroutine on the background loop and wait for it (Ctrl-C cancels it)."""
    future = asyncio.run_coroutine_threadsafe(coro, _background_loop())
    try:
        return future.result(timeout)
    except KeyboardInterrupt:
        future.cancel()
        raise


def close_at_exit(client: ChatClient) -> None:
    """Close a client's connections when the interpreter exits (quietly, best effort)."""

    def close() -> None:
        if _loop is not None and _loop.is_running():
            # Shutting down: a failure to close has nobody left to be reported to.
            with contextlib.suppress(Exception):
                run_sync(client.aclose(), timeout=5)

    atexit.register(close)


# --------------------------------------------------------------------------- runner


@dataclass(frozen=True)
class Outcome:
    """How one call (or cache lookup) ended: ``ok``, ``error`` or ``skipped``."""

    text: str
    status: str
    error_kind: str | None = None


class JudgeRunner:
    """Judges a list of requests.

    Args:
        settings: validated judge settings.
        make_client: returns the transport client (called on the event loop; the
            caller owns it, so its connections can outlive one run).
        cache: answer cache (with its read/write mode).
        pricer: prices each reply.
        usage: running totals (shared with the caller for the summary).
        retry: backoff policy.
        show_progress: draw the progress bar.
    """

    def __init__(
        self,
        settings: JudgeSettings,
        make_client: Callable[[], ChatClient],
        cache: JudgeCache,
        pricer: Pricer,
        usage: UsageTracker,
        retry: RetryPolicy,
        show_progress: bool = True,
    ) -> None:
        self.settings = settings
        self._make_client = make_client
        self.cache = cache
        self.pricer = pricer
        self.usage = usage
        self.retry = retry
        self.show_progress = show_progress
        self._fatal: JudgeFatalError | None = None
        self._in_flight = 0
        self._failed_streak = 0
        self._budget_note_shown = False

    def run(self, requests: Sequence[ChatRequest], sample_indices: Sequence[int]) -> list[str]:
        """Completions for ``requests``, in the same order.

        Args:
            requests: the requests; may be a lazy sequence (each item is read once,
                inside its task, so the first calls go out before the rest are built).
            sample_indices: for each request, how many identical requests precede it.
        """
        return run_sync(self._run(requests, sample_indices))

    # -- orchestration

    async def _run(self, requests: Sequence[ChatRequest], sample_indices: Sequence[int]) -> list[str]:
        self.client = self._make_client()
        self.limiter = AdaptiveLimiter(self.settings.num_concurrent, self.settings.rpm, self.settings.tpm)
        results: list[str] = [""] * len(requests)
        self.bar = tqdm(
            total=len(requests), desc="prb-judge", unit="req", disable=not self.show_progress,
            mininterval=0.25, dynamic_ncols=True, file=sys.stderr,
        )
        # Tasks are created as earlier ones finish, keeping about 1.5x the concurrency
        # alive: enough that a freed slot is taken at once by a task already waiting for
        # it, few enough that building and looking up thousands of requests does not
        # hold up the replies of those in flight.
        admission = asyncio.Semaphore(self.settings.num_concurrent + max(4, self.settings.num_concurrent // 2))
        tasks: list[asyncio.Task[None]] = []
        try:
            for index in range(len(requests)):
                await admission.acquire()
                if self._fatal is not None:
                    break
                task = asyncio.create_task(self._judge(index, requests, sample_indices[index], results))
                task.add_done_callback(lambda _: admission.release())
                tasks.append(task)
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for waiting in pending:
                waiting.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            # Read every task's exception: an unread one is logged (with a formatted
            # traceback) whenever the garbage collector happens to free the task.
            failures = [t.exception() for t in done if not t.cancelled()]
            if self._fatal is not None:
                raise self._fatal
            for failure in failures:
                if failure is not None:
                    raise failure
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            settle = getattr(self.client, "settle", None)
            if settle is not None:
                await settle()
            self.bar.set_postfix_str(self.usage.postfix(self.limiter.slots), refresh=False)
            self.bar.close()
            self.usage.finished = time.monotonic()
            self.usage.lowest_concurrency = int(self.limiter.lowest)
            self.cache.release_thread()
        return results

    def _key(self, request: ChatRequest, sample_index: int) -> str:
        if self.cache.mode == "off":
            return ""  # never used: skip hashing the request
        return cache_key(request_digest(request, self.settings.model_id, self.settings.api_base), sample_index)

    async def _judge(self, index: int, requests: Sequence[ChatRequest], sample: int, results: list[str]) -> None:
        request = requests[index]
        outcome = await self._answer(request, self._key(request, sample))
        text = outcome.text
        if outcome.status == "ok" and self.settings.reask and parse_verdict(text).outcome == "unparsed":
            # One follow-up turn asking only for the verdict; it is a request like any
            # other (cached, retried, priced) and both turns stay in the sample log.
            self.usage.reasks += 1
            followup = request.followup(text, self.settings.reask_prompt)
            follow = await self._answer(followup, self._key(followup, sample))
            if follow.status == "ok":
                text = text + REASK_SEPARATOR + follow.text
            elif follow.status == "error":
                text = text + "\n\n[re-ask failed] " + follow.text.removeprefix(ERROR_MARK).strip()
        results[index] = text
        self.usage.finish_judgment(outcome.status, outcome.error_kind)
        if self.show_progress:
            self.bar.set_postfix_str(self.usage.postfix(self.limiter.slots), refresh=False)
            self.bar.update(1)

    # -- one request

    async def _answer(self, request: ChatRequest, key: str) -> Outcome:
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.hit(hit.cost)
            return Outcome(hit.text, "ok")
        failures = 0
        while True:
            self._check_fatal()
            if self._over_budget():
                return Outcome(f"{SKIPPED_MARK} max_cost reached", "skipped")
            permit: Permit | None = await self.limiter.acquire(request.estimated_tokens())
            used: float | None = None
            try:
                self._check_fatal()
                if failures == 0 and self.cache.readable:
                    # Another process sharing the cache may have answered it meanwhile.
                    hit = self.cache.get(key)
                    if hit is not None:
                        self.usage.hit(hit.cost)
                        return Outcome(hit.text, "ok")
                if self._over_budget():
                    return Outcome(f"{SKIPPED_MARK} max_cost reached", "skipped")
                self._in_flight += 1
                try:
                    result = await self.client.call(request)
                finally:
                    self._in_flight -= 1
                if result.input_tokens is not None and result.output_tokens is not None:
                    used = result.input_tokens + result.output_tokens
            except CallError as err:
                self.usage.failed_attempt(err.kind)
                if err.kind == "rate_limit":
                    self.limiter.on_rate_limited()
                if err.fatal:
                    self._fatal = self._fatal or JudgeFatalError(self._fatal_message(err))
                    raise self._fatal from None
                failures += 1
                if err.retryable and self.retry.should_retry(failures):
                    self.usage.retries += 1
                    delay = self.retry.delay(failures, err.retry_after)
                    # Give the slot back before sleeping, so waiting requests use it meanwhile.
                    if permit is not None:
                        self.limiter.release(permit)
                        permit = None
                    await asyncio.sleep(delay)
                    continue
                self._note_failure(err)
                return Outcome(f"{ERROR_MARK} {err.name}: {err.message}", "error", err.kind)
            finally:
                if permit is not None:
                    self.limiter.release(permit, used)
            # Success.
            self.limiter.on_success()
            self._failed_streak = 0
            cost = self.pricer.cost(result)
            self.usage.call(cost, result.latency, result.input_tokens, result.output_tokens, result.reasoning_tokens)
            if result.refused:
                self.usage.refused += 1
            elif not result.text.strip():
                self.usage.empty += 1
            else:
                self.cache.put(key, CachedAnswer(
                    text=result.text,
                    model=self.settings.model_id,
                    input_tokens=result.input_tokens,
                    output_tokens=result.output_tokens,
                    reasoning_tokens=result.reasoning_tokens,
                    cost=cost,
                    latency=round(result.latency, 4),
                    created=time.time(),
                    profile=answer_profile(request, self.settings.model_id, self.settings.api_base),
                ))
            return Outcome(result.text, "ok")

    # -- run-wide conditions

    def _check_fatal(self) -> None:
        if self._fatal is not None:
            raise self._fatal

    def _note_failure(self, err: CallError) -> None:
        self._failed_streak += 1
        if self.usage.calls_ok == 0 and self._failed_streak >= BREAKER_THRESHOLD and self._fatal is None:
            self._fatal = JudgeFatalError(
                f"prb-judge: the first {self._failed_streak} judgments all failed and none succeeded "
                f"(last: {err.name}: {err.message}); stopping instead of sending the rest"
            )
            raise self._fatal

    def _over_budget(self) -> bool:
        limit = self.settings.max_cost
        if limit is None:
            return False
        spent = self.usage.spent.known
        average = spent / self.usage.calls_ok if self.usage.calls_ok else 0.0
        # Count what is already in flight at the average price, so the budget is not
        # overshot by a whole round of concurrent requests.
        if spent + self._in_flight * average < limit:
            return False
        if not self._budget_note_shown:
            self._budget_note_shown = True
            note = (
                f"max_cost ${limit:g} reached (spent ${spent:.4f}); remaining judgments are "
                "skipped (see skip_rate). Re-run with a higher max_cost: answers so far are cached."
            )
            self.usage.budget_stop = note
            tqdm.write(f"prb-judge: {note}", file=sys.stderr)
        return True

    def _fatal_message(self, err: CallError) -> str:
        model = self.settings.model_id
        where = f" at {self.settings.api_base}" if self.settings.api_base else ""
        detail = f"({err.name}: {err.message})"
        if err.kind == "auth":
            source = self.settings.api_key_env or "the provider's API key environment variable"
            return f"prb-judge: {model}{where} rejected the API key {detail}; check {source}"
        if err.kind == "not_found":
            return f"prb-judge: model '{model}' was not found{where} {detail}; check the model id and api_base"
        return (
            f"prb-judge: {model}{where} rejected the request itself {detail}; every judgment would fail "
            "the same way, so the run stopped (check model_args such as temperature or max_tokens)"
        )

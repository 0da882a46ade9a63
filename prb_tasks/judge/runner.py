"""Run all judge requests of an lm-eval run concurrently, in one pool.

lm-eval hands every ``generate_until`` request of a run (all subtasks) to one
``generate_until`` call; they are all scheduled here at once, first come first
served, under one :class:`~prb_tasks.judge.limiter.AdaptiveLimiter`, and the answers
come back in request order.

Per request: cache lookup -> (first miss only: check the key and price, build the
client) -> claim the request in the shared cache, or wait for the process that has it
in flight (:mod:`.claims`) -> wait for a slot -> call -> on success store the answer at
once (so a killed run loses only what was in flight) -> on a transient failure back
off and retry, within ``max_retries`` and ``max_wait`` seconds of waiting -> then the
judgment becomes an error outcome. An empty reply is asked once more, except for
requests that score their first reply (``ask_once``: a task run by its authors' protocol).

Run-wide stops: a provider answer meaning "every call will fail" (bad key, unknown
model, malformed request) raises at once, as does a run whose first judgments all
fail. An endpoint that cannot be reached or stopped answering, or a quota spent for
longer than ``max_wait`` (:mod:`.health`), or ``max_cost`` reached, stops *sending*: the
remaining judgments become skipped outcomes and results are still written. A frozen
endpoint's requests still in flight are abandoned at once rather than waited for.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tqdm import tqdm

from prb_tasks.common.redact import redact
from prb_tasks.common.retry import RetryPolicy
from prb_tasks.judge.answer_cache import CachedAnswer, JudgeCache
from prb_tasks.judge.claims import ClaimBoard
from prb_tasks.judge.client import CallError, CallResult, ChatClient
from prb_tasks.judge.errors import JudgeError, JudgeFatalError
from prb_tasks.judge.health import EndpointWatch, Halt, quota_halt
from prb_tasks.judge.keys import key_variable
from prb_tasks.judge.limiter import AdaptiveLimiter, Permit
from prb_tasks.judge.logprob_replies import NoLogprobs, no_logprobs_line, soft_reply
from prb_tasks.judge.options import JudgeSettings
from prb_tasks.judge.pricing import Pricer
from prb_tasks.judge.reasoning_budget import is_cut, mark_cut, retried
from prb_tasks.judge.reply_forms import FORMS, reask_prompt
from prb_tasks.judge.request import ChatRequest, answer_profile, cache_key, request_digest
from prb_tasks.judge.storage import CacheDiskFull
from prb_tasks.judge.usage import UsageTracker
from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK

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
    """Run a coroutine on the background loop and wait for it.

    Ctrl-C cancels it and waits (a few seconds at most) until its clean-up has run --
    progress bar closed, claims released, counts final -- so nothing is drawn after
    the caller's one-line message.
    """
    finished = threading.Event()

    async def tracked() -> T:
        try:
            return await coro
        finally:
            finished.set()

    future = asyncio.run_coroutine_threadsafe(tracked(), _background_loop())
    try:
        return future.result(timeout)
    except KeyboardInterrupt:
        future.cancel()
        finished.wait(5)
        raise


def close_at_exit(client: ChatClient) -> None:
    """Close a client's connections when the interpreter exits (quietly, best effort)."""

    def close() -> None:
        if _loop is not None and _loop.is_running():
            # Shutting down: a failure to close has nobody left to be reported to.
            with contextlib.suppress(Exception):
                run_sync(client.aclose(), timeout=5)

    atexit.register(close)


def _being_cancelled() -> bool:
    """Whether the running task itself is being cancelled (Ctrl-C), not just a call it awaited.

    Python 3.10 cannot tell (no ``Task.cancelling``): there, a call abandoned at the very
    moment of a Ctrl-C ends as skipped and the run stops a moment later.
    """
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling is not None and cancelling())


def unreachable_line(model_id: str, api_base: str | None, attempts: int, last: str) -> str:
    """The one line for a judge whose endpoint never answered.

    Args:
        model_id: the litellm model (``openai/gpt-4o-mini``); its prefix names the provider.
        api_base: the server the user named, or None for the provider's own API.
        attempts: connection attempts made in a row.
        last: the last error, ``Name: message``.
    """
    if api_base:
        return (f"prb-judge: could not connect to {model_id} at {api_base} ({attempts} attempts; last: {last}); "
                "check that the server is running and api_base is right")
    provider = model_id.split("/", 1)[0] if "/" in model_id else "provider"
    # No api_base: the user's server is not involved, the machine cannot reach the provider.
    return (f"prb-judge: the {provider} API is unreachable for {model_id} ({attempts} attempts; last: {last}); "
            "check this machine's network connection or proxy settings")


# --------------------------------------------------------------------------- runner


@dataclass(frozen=True)
class Outcome:
    """How one call (or cache lookup) ended: ``ok``, ``error`` or ``skipped``."""

    text: str
    status: str
    error_kind: str | None = None


class _Ticket:
    """A judgment's place in the admission window, given back once (when it ends, or
    earlier when it only waits for another process's answer)."""

    __slots__ = ("_semaphore", "_held")

    def __init__(self, semaphore: asyncio.Semaphore) -> None:
        self._semaphore = semaphore
        self._held = True

    def release(self, _done: object = None) -> None:
        # _done: the finished task, when called back by it.
        if self._held:
            self._held = False
            self._semaphore.release()


class JudgeRunner:
    """Judges a list of requests.

    Args:
        settings: validated judge settings.
        make_client: returns the transport client, checking first what would make
            every call fail (missing key, max_cost without a price). Called once, off
            the event loop, when the first request is about to be sent; the caller owns
            the client, so its connections can outlive one run.
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
        self.client: ChatClient | None = None
        self._client_future: asyncio.Future[ChatClient] | None = None
        self.claims: ClaimBoard | None = None
        self._keep_alive: asyncio.Task[None] | None = None
        self._fatal: JudgeError | None = None
        self._halt: Halt | None = None
        self._in_flight = 0
        self._failed_streak = 0
        self._budget_note_shown = False
        self._timeout_note_shown = False
        self._settled = asyncio.Event()  # set whenever a call ends (its cost is then known)
        self._halted = asyncio.Event()  # set when the run stops sending
        self.where = f"{settings.model_id} at {settings.api_base}" if settings.api_base else settings.model_id
        self.watch = EndpointWatch(self.where, stop_after_timeouts=settings.stop_after_timeouts,
                                   timeout=settings.timeout, stop_after_silence=settings.stop_after_silence)
        self._calls: set[asyncio.Future[CallResult]] = set()
        self._abandoned: set[asyncio.Future[CallResult]] = set()

    def run(self, requests: Sequence[ChatRequest], sample_indices: Sequence[int],
            order: Sequence[int] | None = None) -> list[str]:
        """Completions for ``requests``, in the same order.

        Args:
            requests: the requests; may be a lazy sequence (each item is read once,
                inside its task, so the first calls go out before the rest are built).
            sample_indices: for each request, how many identical requests precede it.
            order: the order to send them in (every index once; see
                :mod:`prb_tasks.judge.dispatch`); None sends them as given.
        """
        return run_sync(self._run(requests, sample_indices, order))

    # -- orchestration

    async def _run(self, requests: Sequence[ChatRequest], sample_indices: Sequence[int],
                   order: Sequence[int] | None = None) -> list[str]:
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
            for index in (order if order is not None else range(len(requests))):
                await admission.acquire()
                if self._fatal is not None:
                    break
                ticket = _Ticket(admission)
                task = asyncio.create_task(self._judge(index, requests, sample_indices[index], results, ticket))
                task.add_done_callback(ticket.release)
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
            if self._keep_alive is not None:
                self._keep_alive.cancel()
            if self.claims is not None:
                self.claims.close()
            settle = getattr(self.client, "settle", None)
            if settle is not None:
                await settle()
            self.bar.set_postfix_str(self.usage.postfix(self.limiter.slots), refresh=False)
            self.bar.close()
            self.usage.finished = time.monotonic()
            self.usage.lowest_concurrency = int(self.limiter.lowest)
            self.usage.final_concurrency = self.limiter.slots
            self.usage.set_aside = self.limiter.set_aside
            if self._halt is not None:
                self.usage.stopped, self.usage.stopped_kind = self._halt.reason, self._halt.kind
            self._final_budget_note()
            self.cache.release_thread()
        return results

    def _key(self, request: ChatRequest, sample_index: int) -> str:
        if self.cache.mode == "off":
            return ""  # never used: skip hashing the request
        return cache_key(request_digest(request, self.settings.model_id, self.settings.api_base), sample_index)

    async def _judge(
        self, index: int, requests: Sequence[ChatRequest], sample: int, results: list[str], ticket: _Ticket
    ) -> None:
        request = requests[index]
        outcome = await self._answer(request, self._key(request, sample), ticket)
        text = outcome.text
        budget = self.settings.reasoning_retry_tokens
        if outcome.status == "ok" and budget and is_cut(text) and (request.max_tokens or 0) < budget:
            # Once, with the larger budget the user set; the reply says so (reasoning_budget).
            self.usage.reasoning_retries += 1
            bigger = replace(request, max_tokens=budget)
            again = await self._answer(bigger, self._key(bigger, sample), ticket)
            if again.status == "ok":
                text = retried(again.text, request.max_tokens, budget)
        form = FORMS.get(request.reply_form) if request.reply_form else None
        if (outcome.status == "ok" and self.settings.reask and not request.ask_once and form is not None
                and not form.reads(text)):
            # One follow-up turn asking only for what the task reads (a letter, a rating, a
            # boxed verdict); it is a request like any other (cached, retried, priced) and
            # both turns stay in the sample log.
            self.usage.reasks += 1
            followup = request.followup(text, reask_prompt(form, self.settings.reask_prompt))
            follow = await self._answer(followup, self._key(followup, sample), ticket)
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

    async def _answer(self, request: ChatRequest, key: str, ticket: _Ticket) -> Outcome:
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.hit(hit.cost)
            return Outcome(hit.text, "ok")
        self._check_fatal()
        stopped = self._stopped()
        if stopped is not None:
            return stopped
        client = await self._client_ready()
        try:
            board = self._claim_board()
            if board is None:
                return await self._send(client, request, key)
            state, answer = await board.claim_or_wait(
                key,
                lookup=lambda: self.cache.get(key),
                stopped=lambda: self._fatal is not None or self._halt is not None,
                on_wait=ticket.release,
            )
        except CacheDiskFull as exc:
            # Claims live next to the answers: their disk is full too.
            self._disk_full(exc)
            return self._stopped() or Outcome(f"{SKIPPED_MARK} stopped", "skipped")
        if state == "answered":
            self.usage.hit(answer.cost, shared=True)
            return Outcome(answer.text, "ok")
        if state == "stopped":
            self._check_fatal()
            return self._stopped() or Outcome(f"{SKIPPED_MARK} stopped", "skipped")
        try:
            # Stored by its previous owner between our lookup and our claim.
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.hit(hit.cost, shared=True)
                return Outcome(hit.text, "ok")
            return await self._send(client, request, key)
        finally:
            board.release(key)

    async def _client_ready(self) -> ChatClient:
        """The client, made (in a worker thread) when the first request needs it."""
        if self.client is not None:
            return self.client
        if self._client_future is None:
            self._client_future = asyncio.ensure_future(asyncio.to_thread(self._make_client))
        try:
            client = await asyncio.shield(self._client_future)
        except JudgeError as exc:
            self._fatal = self._fatal or exc
            raise self._fatal from None
        if self.client is None:
            self.client = client
            self.watch.begin()
        return client

    def _claim_board(self) -> ClaimBoard | None:
        """Claims in the shared cache (only when answers are both read and written)."""
        if self.cache.mode != "on":
            return None
        if self.claims is None:
            self.claims = ClaimBoard(self.cache.directory)
            self._keep_alive = asyncio.ensure_future(self.claims.keep_alive())
        return self.claims

    async def _send(self, client: ChatClient, request: ChatRequest, key: str) -> Outcome:
        failures = 0
        waited = 0.0
        asked_again = False
        while True:
            self._check_fatal()
            stopped = self._stopped() or await self._budget_gate(request)
            if stopped is not None:
                return stopped
            permit: Permit | None = await self.limiter.acquire(request.estimated_tokens())
            used: float | None = None
            try:
                self._check_fatal()
                if failures == 0 and not asked_again and self.cache.readable:
                    # Another process sharing the cache may have answered it meanwhile.
                    hit = self.cache.get(key)
                    if hit is not None:
                        self.usage.hit(hit.cost, shared=True)
                        return Outcome(hit.text, "ok")
                stopped = self._stopped() or await self._budget_gate(request)
                if stopped is not None:
                    return stopped
                self._in_flight += 1
                try:
                    result = await self._call(client, request)
                finally:
                    self._in_flight -= 1
                    self._settled.set()
                if result is None:
                    return self._stopped() or Outcome(f"{SKIPPED_MARK} stopped", "skipped")
                if result.input_tokens is not None and result.output_tokens is not None:
                    used = result.input_tokens + result.output_tokens
            except CallError as err:
                self.usage.failed_attempt(err.kind)
                if err.kind == "rate_limit":
                    self.limiter.on_rate_limited()
                elif err.kind == "timeout" and permit is not None:
                    self.limiter.on_timeout(permit)
                    self._note_timeout()
                if err.fatal:
                    self._fatal = self._fatal or JudgeFatalError(self._fatal_message(err))
                    raise self._fatal from None
                failures += 1
                will_retry = err.retryable and self.retry.should_retry(failures)
                halt = quota_halt(err, self.settings.max_wait, self.where) or self.watch.failure(
                    err, failures, exhausted=not will_retry
                )
                if halt is not None and halt.kind == "unreachable" and self.usage.calls_ok == 0:
                    # Never reached at all: a wrong api_base or a server not started.
                    self._fatal = self._fatal or JudgeFatalError(
                        unreachable_line(self.settings.model_id, self.settings.api_base, self.watch.streak,
                                         f"{err.name}: {err.message}"))
                    raise self._fatal
                if halt is not None:
                    self._stop(halt)
                    return self._stopped() or Outcome(f"{SKIPPED_MARK} stopped", "skipped")
                delay = self.retry.delay(failures, err.retry_after) if will_retry else 0.0
                if err.kind == "timeout" and permit is not None and self.limiter.hung(permit):
                    # It hung while the others were answered: it already waited a whole
                    # timeout, and backing off would not make the server any less stuck.
                    delay = 0.0
                remaining = self.settings.max_wait - waited
                if will_retry and delay > remaining:
                    if err.retry_after is None and remaining > 0.01:
                        delay = remaining  # a computed backoff may be shortened; a server's ask is not
                    else:
                        self._note_failure(err)
                        return Outcome(
                            f"{ERROR_MARK} {err.name}: {err.message} (gave up after waiting {waited:.0f} s "
                            f"in all; max_wait={self.settings.max_wait:g})",
                            "error", err.kind,
                        )
                if will_retry:
                    self.usage.retries += 1
                    waited += delay
                    # Give the slot back before sleeping, so waiting requests use it meanwhile.
                    if permit is not None:
                        self.limiter.release(permit)
                        permit = None
                    await self._back_off(delay)
                    continue
                self._note_failure(err)
                return Outcome(f"{ERROR_MARK} {err.name}: {err.message}", "error", err.kind)
            finally:
                if permit is not None:
                    self.limiter.release(permit, used)
            cost = self._succeeded(result)
            try:
                result = soft_reply(result, request)
            except NoLogprobs:
                self._fatal = self._fatal or JudgeFatalError(no_logprobs_line(
                    self.settings.model_id, self.settings.api_base, request.top_logprobs or 0))
                raise self._fatal from None
            result = mark_cut(result, request)
            if not result.refused and not result.text.strip() and not asked_again and not request.ask_once:
                # Empty replies are usually a server hiccup: ask once more, at once.
                asked_again = True
                self.usage.empty_retries += 1
                continue
            if result.refused:
                self.usage.refused += 1
                return Outcome(result.text, "ok")
            if not result.text.strip():
                self.usage.empty += 1
                self.usage.empty_scored += int(request.ask_once)
            if (result.text.strip() or request.ask_once) and self.cache.writable:
                # A first-reply protocol scores an empty reply, so it is kept like any
                # answer: a re-run must score the same reply, not ask again.
                self._keep(key, CachedAnswer(
                    text=result.text,
                    model=self.settings.model_id,
                    input_tokens=result.input_tokens,
                    output_tokens=result.output_tokens,
                    reasoning_tokens=result.reasoning_tokens,
                    cost=cost,
                    latency=round(result.latency, 4),
                    created=time.time(),
                    profile=answer_profile(request, self.settings.model_id, self.settings.api_base),
                    cached_input_tokens=result.cached_input_tokens,
                ))
            return Outcome(result.text, "ok")

    def _keep(self, key: str, answer: CachedAnswer) -> None:
        """Store an answer; on a full disk it is still used by this run, and no more requests are sent."""
        try:
            self.cache.put(key, answer)
        except CacheDiskFull as exc:
            self.usage.unstored += 1
            self._disk_full(exc)
            return
        self.usage.stored += int(self.cache.writable)

    def _disk_full(self, exc: CacheDiskFull) -> None:
        # Answers could no longer be kept past this run: spending more would be lost on a re-run.
        self._stop(Halt("disk_full", exc.problem, "cache disk full"))

    async def _call(self, client: ChatClient, request: ChatRequest) -> CallResult | None:
        """One attempt; None when the run stopped and abandoned it while it was waiting."""
        call = asyncio.ensure_future(client.call(request))
        self._calls.add(call)
        try:
            return await call
        except asyncio.CancelledError:
            if call in self._abandoned and not _being_cancelled():
                return None
            raise
        finally:
            self._calls.discard(call)
            self._abandoned.discard(call)

    async def _back_off(self, delay: float) -> None:
        """Wait before a retry; wake at once when the run stops sending (the retry is then skipped)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._halted.wait(), delay)

    def _abandon_calls(self) -> None:
        """Stop waiting for the replies of every request in flight (a frozen server sends none)."""
        for call in list(self._calls):
            self._abandoned.add(call)
            call.cancel()

    def _succeeded(self, result: CallResult) -> float | None:
        """Account a reply; its cost in dollars (None: unknown)."""
        self.limiter.on_success(result.latency)
        self.watch.success()
        self._failed_streak = 0
        cost = self.pricer.cost(result)
        self.usage.call(cost, result.latency, result.input_tokens, result.output_tokens, result.reasoning_tokens,
                        result.cached_input_tokens, result.cache_write_tokens, self.pricer.saving(result))
        return cost

    # -- run-wide conditions

    def _check_fatal(self) -> None:
        if self._fatal is not None:
            raise self._fatal

    def _stopped(self) -> Outcome | None:
        """The skipped outcome of every judgment not yet sent, once the run stopped sending."""
        if self._halt is None:
            return None
        return Outcome(f"{SKIPPED_MARK} {self._halt.short}", "skipped")

    def _stop(self, halt: Halt) -> None:
        if self._halt is not None:
            return
        self._halt = halt
        self._halted.set()
        tqdm.write(redact(f"prb-judge: {halt.reason}; no new requests are sent (the rest are skipped)"),
                   file=sys.stderr)
        if halt.kind == "unresponsive":
            self._abandon_calls()

    def _note_timeout(self) -> None:
        if self._timeout_note_shown:
            return
        self._timeout_note_shown = True
        limit = self.settings.stop_after_timeouts
        # As EndpointWatch decides: the streak and an outage of this long, both.
        silence = max(self.settings.stop_after_silence, 2 * self.settings.timeout)
        stop = f", and {limit} in a row with no reply at all for {silence:g} s stop the run" if limit else ""
        tqdm.write(
            f"prb-judge: a request got no reply within timeout={self.settings.timeout:g} s; it is retried, "
            f"repeated timeouts lower the concurrency until replies come back{stop}. "
            "Slow local server? Raise timeout= (e.g. timeout=600).",
            file=sys.stderr,
        )

    def _note_failure(self, err: CallError) -> None:
        self._failed_streak += 1
        if self.usage.calls_ok == 0 and self._failed_streak >= BREAKER_THRESHOLD and self._fatal is None:
            self._fatal = JudgeFatalError(
                f"prb-judge: the first {self._failed_streak} judgments all failed and none succeeded "
                f"(last: {err.name}: {err.message}); stopping instead of sending the rest"
            )
            raise self._fatal

    def _expected_cost(self, request: ChatRequest) -> float:
        """Dollars a request will probably cost: the average so far, else from the listed price."""
        priced = self.usage.calls_ok - self.usage.spent.unknown
        if priced > 0:
            return self.usage.spent.known / priced
        price = self.pricer.listed()
        if price is None:
            return 0.0
        prompt = sum(len(m.get("content", "")) for m in request.messages) // 4
        return price.cost(prompt, request.max_tokens or 512) or 0.0

    async def _budget_gate(self, request: ChatRequest) -> Outcome | None:
        """Wait until sending ``request`` fits in ``max_cost``; its skipped outcome if it never will.

        Requests in flight are counted at their expected cost: while they would take
        spending past the limit, this waits for them to report their real cost. So
        what the run spends can pass ``max_cost`` only by what the requests in flight
        cost beyond that estimate (at most ``num_concurrent`` requests' worth).
        """
        limit = self.settings.max_cost
        if limit is None:
            return None
        while True:
            spent = self.usage.spent.known
            each = self._expected_cost(request)
            if spent >= limit or spent + each > limit:
                break
            if spent + (self._in_flight + 1) * each <= limit:
                return None
            settled = self._settled
            settled.clear()
            await settled.wait()
        if not self._budget_note_shown:
            self._budget_note_shown = True
            note = (
                f"max_cost ${limit:.4f} reached: ${spent:.4f} spent and {self._in_flight} request(s) in flight "
                f"(about ${each:.4f} each); no new requests are sent, the remaining judgments are skipped "
                "(skip_rate). Re-run with a higher max_cost to continue: answers so far are cached."
            )
            self.usage.budget_stop = note
            tqdm.write(f"prb-judge: {note}", file=sys.stderr)
        return Outcome(f"{SKIPPED_MARK} max_cost reached", "skipped")

    def _final_budget_note(self) -> None:
        """Restate the budget stop with the final spending (what the summary's cost says)."""
        limit = self.settings.max_cost
        if limit is None or not self._budget_note_shown:
            return
        self.usage.budget_stop = (
            f"max_cost ${limit:.4f} reached: ${self.usage.spent.known:.4f} spent in all, including the requests "
            "already in flight when the limit was reached; the remaining judgments were skipped (skip_rate). "
            "Re-run with a higher max_cost to continue: answers so far are cached."
        )

    def _fatal_message(self, err: CallError) -> str:
        model = self.settings.model_id
        where = f" at {self.settings.api_base}" if self.settings.api_base else ""
        detail = f"({err.name}: {err.message})"
        if err.kind == "auth":
            return f"prb-judge: {model}{where} rejected the API key {detail}; check {key_variable(self.settings)}"
        if err.kind == "not_found":
            return (
                f"prb-judge: model '{model}' or its URL was not found{where} {detail}; check the model id "
                "(with its litellm provider prefix, e.g. openai/gpt-4o-mini) and api_base"
            )
        return (
            f"prb-judge: {model}{where} rejected the request itself {detail}; every judgment would fail "
            "the same way, so the run stopped (check model_args such as temperature or max_tokens)"
        )

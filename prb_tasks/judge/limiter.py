"""How many requests may be in flight, and when the next one may start.

Concurrency adapts to the provider (AIMD, as in TCP): when rate-limit answers make up a
real share of recent replies (``overload_share``), the effective limit halves (at most
once per ``cooldown``, so one burst of 429s counts once); every success adds ``1/limit``,
i.e. about one more slot per round of successes, up to ``num_concurrent``. A few stray
429s (providers send some even when far below the limit) are retried without shrinking
the pool: halving on each of them would collapse throughput for nothing.

Timeouts count faster: a server that answers one request at a time (a CPU llama.cpp)
lets the queued ones time out, so two timeouts among requests sent since the last
decrease halve the limit; successes grow it back as after rate limits, so a burst of
timeouts (a server that paused) costs throughput only while it lasts.

A request that hangs is its own problem, not a sign that the server is overloaded: once
replies have been seen, a request in flight far longer than they usually take
(``stall_factor`` times their 90th percentile, at least ``stall_floor`` seconds) is
*set aside* -- it keeps waiting for its reply, but no longer holds a slot, so the others
keep flowing (at most ``num_concurrent`` requests are set aside at once) -- and its
eventual timeout does not lower the limit. Without this, a server that hangs on one
request in ten holds most slots waiting for timeouts.

Optional requests-per-minute and tokens-per-minute ceilings are token buckets holding
ten seconds' worth, so short bursts are allowed but the average stays under the ceiling.

Everything runs on one asyncio loop: no locks, waiters are served first come, first
served, which keeps requests going out in order.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Bucket:
    """A token bucket refilled at ``per_minute / 60`` per second.

    Args:
        per_minute: average allowance.
        clock: time source in seconds.
    """

    per_minute: float
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.capacity = max(1.0, self.per_minute / 6.0)
        self.level = self.capacity
        self._stamp = self.clock()

    def _refill(self) -> None:
        now = self.clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.per_minute / 60.0)
        self._stamp = now

    def wait_time(self, amount: float) -> float:
        """Seconds until ``amount`` may be taken (0: now).

        A request bigger than the whole bucket may go when the bucket is full and
        leaves it in debt, so it is delayed but never starved.
        """
        self._refill()
        need = min(amount, self.capacity)
        if self.level >= need:
            return 0.0
        return (need - self.level) * 60.0 / self.per_minute

    def take(self, amount: float) -> None:
        self._refill()
        self.level -= amount

    def give_back(self, amount: float) -> None:
        """Return an over-estimate once the real usage is known."""
        self._refill()
        self.level = min(self.capacity, self.level + amount)


class Permit:
    """One granted slot; hand it back with :meth:`AdaptiveLimiter.release`.

    Attributes:
        tokens: tokens taken from the tokens-per-minute bucket.
        granted: when the slot was granted (limiter clock).
        stalled: set aside as hung (it no longer holds a slot).
    """

    __slots__ = ("tokens", "granted", "stalled")

    def __init__(self, tokens: float, granted: float = 0.0) -> None:
        self.tokens = tokens
        self.granted = granted
        self.stalled = False


class AdaptiveLimiter:
    """Grants request slots under an adaptive concurrency limit and rate ceilings.

    Args:
        max_concurrent: the most requests in flight (``num_concurrent``).
        rpm: requests-per-minute ceiling, or None.
        tpm: tokens-per-minute ceiling, or None.
        cooldown: seconds after a decrease during which further 429s do not decrease again.
        overload_share: share of rate-limit answers among recent replies that means "too fast".
        stall_factor: a request in flight this many times longer than the 90th
            percentile of recent reply times is set aside as hung.
        stall_floor: ... but never before this many seconds.
        clock: time source in seconds.
    """

    # Reply times needed before "far longer than usual" means anything.
    MIN_LATENCIES = 8

    def __init__(
        self,
        max_concurrent: int,
        rpm: float | None = None,
        tpm: float | None = None,
        cooldown: float = 1.0,
        overload_share: float = 0.2,
        stall_factor: float = 3.0,
        stall_floor: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_concurrent = max_concurrent
        self.limit = float(max_concurrent)
        self.lowest = float(max_concurrent)
        self.in_flight = 0
        self.decreases = 0
        self._cooldown = cooldown
        self._clock = clock
        self._last_decrease = -1e18
        self._timeouts_since_decrease = 0
        self.timeouts = 0
        self._stall_factor = stall_factor
        self._stall_floor = stall_floor
        self._latencies: deque[float] = deque(maxlen=64)
        self._stall_threshold: float | None = None  # stall_after(), until the next reply time
        # Slots held, oldest first (insertion order: permits are granted in time order).
        self._active: dict[Permit, None] = {}
        self.stalled = 0  # requests set aside right now
        self.set_aside = 0  # requests set aside in all
        self._overload_share = overload_share
        # Recent replies, True for a rate-limit answer.
        self._recent: deque[bool] = deque(maxlen=min(256, max(20, 2 * max_concurrent)))
        self._rpm = Bucket(rpm, clock) if rpm else None
        self._tpm = Bucket(tpm, clock) if tpm else None
        self._waiters: deque[tuple[asyncio.Future[Permit], float]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    @property
    def slots(self) -> int:
        """Requests allowed in flight right now."""
        return max(1, int(self.limit))

    async def acquire(self, tokens: float = 0.0) -> Permit:
        """Wait for a slot.

        Args:
            tokens: estimated tokens of the request (for ``tpm``).
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Permit] = loop.create_future()
        self._waiters.append((future, tokens))
        self._wake()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                # Granted and cancelled in the same tick: give the slot back.
                self.release(future.result())
            else:
                self._waiters = deque(w for w in self._waiters if w[0] is not future)
            raise

    def release(self, permit: Permit, tokens_used: float | None = None) -> None:
        """Hand a slot back.

        Args:
            permit: what :meth:`acquire` returned.
            tokens_used: the request's real tokens, to refund an over-estimate.
        """
        if permit.stalled:
            self.stalled -= 1
        else:
            self.in_flight -= 1
            self._active.pop(permit, None)
        if self._tpm is not None and tokens_used is not None and tokens_used < permit.tokens:
            self._tpm.give_back(permit.tokens - tokens_used)
        self._wake()

    def on_success(self, latency: float | None = None) -> None:
        """Additive increase.

        Args:
            latency: seconds the reply took (what "usually" means for hung requests).
        """
        self._recent.append(False)
        if latency is not None:
            self._latencies.append(latency)
            self._stall_threshold = None
        if self.limit < self.max_concurrent:
            self.limit = min(float(self.max_concurrent), self.limit + 1.0 / self.limit)
            self._wake()

    def hung(self, permit: Permit) -> bool:
        """Whether a request has been (or could have been) set aside: far slower than the replies around it."""
        threshold = self.stall_after()
        return permit.stalled or (threshold is not None and self._clock() - permit.granted > threshold)

    def stall_after(self) -> float | None:
        """Seconds after which a request in flight counts as hung (None: too few replies yet)."""
        if len(self._latencies) < self.MIN_LATENCIES:
            return None
        if self._stall_threshold is None:
            ordered = sorted(self._latencies)
            p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
            self._stall_threshold = max(self._stall_floor, self._stall_factor * p90)
        return self._stall_threshold

    def on_rate_limited(self) -> None:
        """Multiplicative decrease (once per cooldown, when 429s are a real share of replies)."""
        self._recent.append(True)
        limited = sum(self._recent)
        # Judge the share over at least 20 replies, so two early 429s do not look like 100%.
        if limited < 2 or limited < self._overload_share * max(len(self._recent), 20):
            return
        if self._clock() - self._last_decrease < self._cooldown:
            return
        self._decrease()

    def on_timeout(self, permit: Permit, repeat: int = 2) -> None:
        """A request got no reply in time: halve when ``repeat`` requests sent since the last decrease timed out.

        Requests already queued at the server when the limit was lowered time out too;
        counting only those sent afterwards halves once per round, not once per request.
        A request that hung while replies kept coming fast (it was, or would have been,
        set aside) is not counted: lowering the limit would not have saved it.
        """
        self.timeouts += 1
        if self.hung(permit):
            return
        if permit.granted < self._last_decrease:
            return
        self._timeouts_since_decrease += 1
        if self._timeouts_since_decrease < repeat or self.limit <= 1.0:
            return
        self._decrease()

    def _decrease(self) -> None:
        self._last_decrease = self._clock()
        self._timeouts_since_decrease = 0
        self.limit = max(1.0, self.limit / 2.0)
        self.lowest = min(self.lowest, self.limit)
        self.decreases += 1

    def _wake(self) -> None:
        while self._waiters:
            future, tokens = self._waiters[0]
            if future.done():
                self._waiters.popleft()
                continue
            if self.in_flight >= self.slots and not self._set_aside_stalled():
                return
            wait = 0.0
            if self._rpm is not None:
                wait = max(wait, self._rpm.wait_time(1))
            if self._tpm is not None:
                wait = max(wait, self._tpm.wait_time(tokens))
            if wait > 0:
                self._schedule(wait)
                return
            self._waiters.popleft()
            if self._rpm is not None:
                self._rpm.take(1)
            if self._tpm is not None:
                self._tpm.take(tokens)
            self.in_flight += 1
            permit = Permit(tokens, self._clock())
            self._active[permit] = None
            future.set_result(permit)

    def _set_aside_stalled(self) -> bool:
        """Stop counting hung requests against the limit; whether a slot came free.

        When none is hung yet, wake up again when the oldest request would be.
        """
        threshold = self.stall_after()
        if threshold is None or self.stalled >= self.max_concurrent or not self._active:
            return False
        now = self._clock()
        freed = False
        while self._active and self.stalled < self.max_concurrent:
            oldest = next(iter(self._active))
            if now - oldest.granted <= threshold:
                break
            del self._active[oldest]
            oldest.stalled = True
            self.in_flight -= 1
            self.stalled += 1
            self.set_aside += 1
            freed = True
        if not freed and self._active:
            self._schedule(max(0.01, next(iter(self._active)).granted + threshold - now))
        return freed and self.in_flight < self.slots

    def _schedule(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        if self._timer is not None and not self._timer.cancelled():
            if self._timer.when() <= loop.time() + delay:
                return
            self._timer.cancel()  # a sooner wake-up is needed

        def fire() -> None:
            self._timer = None
            self._wake()

        self._timer = loop.call_later(delay, fire)

"""How many requests may be in flight, and when the next one may start.

Concurrency adapts to the provider (AIMD, as in TCP): when rate-limit answers make up a
real share of recent replies (``overload_share``), the effective limit halves (at most
once per ``cooldown``, so one burst of 429s counts once); every success adds ``1/limit``,
i.e. about one more slot per round of successes, up to ``num_concurrent``. A few stray
429s (providers send some even when far below the limit) are retried without shrinking
the pool: halving on each of them would collapse throughput for nothing. Timeouts
count the same way, faster: a server that answers one request at a time (a CPU
llama.cpp) lets the queued ones time out, so two timeouts among requests sent since
the last decrease halve the limit -- and, unlike after rate limits, it does not grow
back above that level for the rest of the run: a slow server does not get faster, and
every timeout throws a whole answer's work away. Optional requests-per-minute and tokens-per-minute ceilings are
token buckets holding ten seconds' worth, so short bursts are allowed but the average
stays under the ceiling.

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
    """

    __slots__ = ("tokens", "granted")

    def __init__(self, tokens: float, granted: float = 0.0) -> None:
        self.tokens = tokens
        self.granted = granted


class AdaptiveLimiter:
    """Grants request slots under an adaptive concurrency limit and rate ceilings.

    Args:
        max_concurrent: the most requests in flight (``num_concurrent``).
        rpm: requests-per-minute ceiling, or None.
        tpm: tokens-per-minute ceiling, or None.
        cooldown: seconds after a decrease during which further 429s do not decrease again.
        overload_share: share of rate-limit answers among recent replies that means "too fast".
        clock: time source in seconds.
    """

    def __init__(
        self,
        max_concurrent: int,
        rpm: float | None = None,
        tpm: float | None = None,
        cooldown: float = 1.0,
        overload_share: float = 0.2,
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
        self._ceiling = float(max_concurrent)
        self.timeouts = 0
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
        self.in_flight -= 1
        if self._tpm is not None and tokens_used is not None and tokens_used < permit.tokens:
            self._tpm.give_back(permit.tokens - tokens_used)
        self._wake()

    def on_success(self) -> None:
        """Additive increase."""
        self._recent.append(False)
        if self.limit < self._ceiling:
            self.limit = min(self._ceiling, self.limit + 1.0 / self.limit)
            self._wake()

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
        """
        self.timeouts += 1
        if permit.granted < self._last_decrease:
            return
        self._timeouts_since_decrease += 1
        if self._timeouts_since_decrease < repeat or self.limit <= 1.0:
            return
        self._decrease()
        self._ceiling = self.limit

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
            if self.in_flight >= self.slots:
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
            future.set_result(Permit(tokens, self._clock()))

    def _schedule(self, delay: float) -> None:
        if self._timer is not None and not self._timer.cancelled():
            return
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timer = None
            self._wake()

        self._timer = loop.call_later(delay, fire)

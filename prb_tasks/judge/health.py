"""When to stop sending: the endpoint is gone or frozen, or the provider's quota is spent.

Three run-wide conditions make every further request pointless, however many retries
are left:

* **The endpoint is gone** (a local server crashed, a tunnel closed): no connection can
  be opened at all. :class:`EndpointWatch` declares it after ``threshold`` attempts in a
  row, across all judgments, failed to connect (any reply from the server, even an
  error, resets the count) *and* one judgment has already backed off
  ``patience`` times or used up its retries -- so a server that restarts within a few
  seconds does not end the run, and one that is down does not cost every remaining
  judgment its full set of retries.
* **The endpoint is frozen** (it accepts connections but never answers: a hung worker,
  a stuck proxy): ``stop_after_timeouts`` attempts in a row, across all judgments and at
  any point of the run, got no reply within ``timeout`` (any reply resets the count),
  *and* the outage is sustained: nothing has answered for ``stop_after_silence`` seconds
  or twice ``timeout``, whichever is longer. The outage is counted from the later of the
  last reply and the moment the first of those timed-out attempts was sent, so an idle
  stretch of the run (no request out) never counts as silence. The second condition keeps
  a slow server that still answers now and then going (a CPU llama.cpp whose queue is
  too long: the queued requests time out in a burst, and the server keeps working on
  them after the client gave up), where lowering the concurrency helps, and a server
  that pauses for a few seconds now and then (requests answered between the pauses);
  the floor of ``stop_after_silence`` matters with a short ``timeout``, where a few
  pauses of about a ``timeout`` each can leave two ``timeout``s without a reply. A
  frozen server stops the run about ``max(stop_after_silence, 2 x timeout)`` after it
  froze (plus at most one ``timeout``); the requests still in flight are then
  abandoned. Without it, every judgment would wait ``timeout`` seconds for each of its
  retries: days at the default settings.
* **The quota is spent**: a rate-limit answer asking to wait longer than
  ``max_wait`` (a daily quota), or OpenAI's ``insufficient_quota`` (no waiting helps).

Either way the run stops sending, the judgments not yet answered become
``[prb:skipped]`` outcomes, results are still written, and re-running the same command
resumes from the cache.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from prb_tasks.judge.client import CallError

# OpenAI's "You exceeded your current quota, please check your plan and billing details"
# (type/code ``insufficient_quota``): a 429 that no amount of waiting fixes.
_HARD_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota|check your plan and billing", re.I)


@dataclass(frozen=True)
class Halt:
    """Why a run stopped sending.

    Attributes:
        kind: ``unreachable``, ``unresponsive`` or ``quota``.
        reason: one line saying what happened (provider's message included, key-free).
        short: a few words for the skipped outcomes.
    """

    kind: str
    reason: str
    short: str


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


class EndpointWatch:
    """Counts connection failures and timeouts in a row; says when the endpoint is gone or frozen.

    Args:
        where: how to name the endpoint in messages (model and URL).
        threshold: failed connection attempts in a row that may mean "gone".
        patience: back-offs one judgment must have waited through before that.
        stop_after_timeouts: attempts in a row without a reply within ``timeout`` that,
            with an outage of :attr:`needed_silence` seconds, mean "frozen" (0: never stop
            for timeouts).
        timeout: the ``timeout`` setting (named in the message).
        stop_after_silence: the shortest outage (seconds) that may stop the run; twice
            ``timeout`` when that is longer.
        clock: time source in seconds.
    """

    def __init__(self, where: str, threshold: int = 10, patience: int = 3, stop_after_timeouts: int = 0,
                 timeout: float = 0.0, stop_after_silence: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.where = where
        self.threshold = threshold
        self.patience = patience
        self.stop_after_timeouts = stop_after_timeouts
        self.timeout = timeout
        self.stop_after_silence = stop_after_silence
        self._clock = clock
        self.streak = 0
        self.timeouts = 0
        self.last_reply = clock()  # the run's start counts: nothing could answer before it
        self._first_timeout_sent: float | None = None  # when the streak's first timed-out attempt went out

    @property
    def needed_silence(self) -> float:
        """Seconds without any reply that a frozen-server stop needs."""
        return max(self.stop_after_silence, 2 * self.timeout)

    def outage(self) -> float:
        """Seconds the current run of timeouts has gone without a reply (0 when none timed out)."""
        if self._first_timeout_sent is None:
            return 0.0
        return self._clock() - max(self.last_reply, self._first_timeout_sent)

    def begin(self) -> None:
        """The first request is about to go out: silence counts from now, not from set-up."""
        self.last_reply = self._clock()

    def success(self) -> None:
        """The server answered (anything but a failure to connect or a timeout)."""
        self.streak = 0
        self.timeouts = 0
        self.last_reply = self._clock()
        self._first_timeout_sent = None

    def failure(self, err: CallError, failures: int, exhausted: bool) -> Halt | None:
        """Record a failed attempt; a :class:`Halt` when the endpoint is judged gone.

        Args:
            err: the classified failure.
            failures: failed attempts so far of the judgment it belongs to.
            exhausted: that judgment has no retries left.
        """
        if err.kind == "timeout":
            self.timeouts += 1
            if self._first_timeout_sent is None:
                # It waited ``timeout`` for nothing: the outage began no later than its sending.
                self._first_timeout_sent = self._clock() - self.timeout
            silent = self.outage()
            if (not self.stop_after_timeouts or self.timeouts < self.stop_after_timeouts
                    or silent < self.needed_silence):
                return None
            return Halt(
                "unresponsive",
                f"{self.where} stopped answering: {self.timeouts} requests in a row got no reply within "
                f"timeout={self.timeout:g} s and nothing answered for {_duration(silent)} "
                f"(stop_after_timeouts={self.stop_after_timeouts}, stop_after_silence={self.stop_after_silence:g})",
                "endpoint not answering",
            )
        if not err.unreachable:
            self.success()  # an error reply is still a reply
            return None
        self.streak += 1
        if self.streak < self.threshold or not (exhausted or failures > self.patience):
            return None
        return Halt(
            "unreachable",
            f"{self.where} stopped answering: {self.streak} connection attempts in a row failed "
            f"(last: {err.name}: {err.message})",
            "endpoint unreachable",
        )


def quota_halt(err: CallError, max_wait: float, where: str) -> Halt | None:
    """A :class:`Halt` when a rate-limit answer means the quota is spent for longer than ``max_wait``.

    Args:
        err: the classified failure.
        max_wait: ``max_wait`` setting (seconds one judgment may wait in total).
        where: how to name the provider in messages.
    """
    if err.kind != "rate_limit":
        return None
    if _HARD_QUOTA.search(err.message):
        wait = "its quota is used up"
    elif err.retry_after is not None and err.retry_after > max_wait:
        wait = f"it asks to wait {_duration(err.retry_after)}, longer than max_wait={max_wait:g} s"
    else:
        return None
    return Halt(
        "quota",
        f"{where}: {wait} ({err.name}: {err.message})",
        "provider quota exhausted",
    )

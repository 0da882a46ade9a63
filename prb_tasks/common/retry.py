"""When to try a failed call again, and how long to wait first.

The one retry policy of the project: the judge backend (litellm's own retries are off,
they multiply requests and hide failures) and the served-RM client both use it. A
server's ``Retry-After`` is followed when given (it knows when capacity frees up);
otherwise delays grow exponentially with "equal jitter" (half fixed, half random) so a
burst of failures does not come back as a synchronized burst.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

# A Retry-After longer than this is usually a daily quota: waiting will not help.
RETRY_AFTER_CAP = 600.0


@dataclass
class RetryPolicy:
    """Backoff for transient failures.

    Args:
        max_retries: retries after the first attempt (0: never retry).
        base: delay before the first retry, in seconds.
        cap: longest computed delay, in seconds.
        rng: random source (seed it for reproducible tests).
    """

    max_retries: int = 6
    base: float = 1.0
    cap: float = 60.0
    rng: random.Random = field(default_factory=random.Random)

    def should_retry(self, failures: int) -> bool:
        """Whether to try again after ``failures`` failed attempts of one request."""
        return failures <= self.max_retries

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """Seconds to wait after the ``failures``-th failed attempt (1-based).

        Args:
            failures: failed attempts so far for this request.
            retry_after: what the server asked for, if anything.
        """
        if retry_after is not None:
            # The server knows when capacity frees up: wait what it asks, spread a little
            # past that moment so retries do not all land at once.
            asked = min(max(retry_after, 0.01), RETRY_AFTER_CAP)
            return asked * (1 + self.rng.uniform(0, 0.1))
        ceiling = min(self.cap, self.base * (2 ** max(0, failures - 1)))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)


def retry_after_seconds(value: object) -> float | None:
    """Seconds asked for by one ``Retry-After`` value (a number or an HTTP date), if any."""
    if value is None or value == "":
        return None
    try:
        return max(0.0, float(str(value)))
    except ValueError:
        pass
    import time
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_retry_after(headers: object) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` in a header mapping, if any.

    Args:
        headers: ``httpx.Headers``, an aiohttp multidict or a plain dict (keys in any case).
    """
    getter = getattr(headers, "get", None)
    if getter is None:
        return None

    def lookup(name: str) -> object:
        value = getter(name)
        if value is None:
            value = getter(name.title())
        return value

    millis = lookup("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(str(millis)) / 1000.0)
        except ValueError:
            pass
    return retry_after_seconds(lookup("retry-after"))

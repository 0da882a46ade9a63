"""The order prb-judge sends requests in, so that providers' prompt caches can serve them.

Requests that share a long prefix (the two orders of a pair, a user's several items) sit
next to each other in lm-eval's request list. Sent in that order at any concurrency, they
go out together, and a provider caches a prefix only once a request with it has been
processed: both pay full price. Here the first request of each group keeps its place
and the rest of the group follows a fixed number of dispatches later, by which time the
first has usually been answered and its prefix cached, while the group stays close
enough together for the cache (minutes) to still hold it.

Only the sending order changes: answers are returned in lm-eval's order, and cache keys
and repeats do not depend on it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from typing import Any


def spaced_order(groups: Sequence[Hashable | None], gap: int) -> list[int]:
    """A dispatch order: each group's first request in place, the others ``gap`` later.

    Args:
        groups: for each request (in lm-eval's order), what it shares a prefix with (e.g.
            its pair or user), or None for a request that shares nothing.
        gap: dispatches between a group's first request and the rest of the group (about
            twice the concurrency: the first has then been answered). 0 keeps the order.

    Returns:
        every index of ``groups`` once.
    """
    if gap <= 0 or len(groups) < 2:
        return list(range(len(groups)))
    seen: set[Hashable] = set()
    waiting: deque[tuple[int, int]] = deque()  # (index, earliest dispatch position)
    order: list[int] = []
    for index, group in enumerate(groups):
        while waiting and waiting[0][1] <= len(order):
            order.append(waiting.popleft()[0])
        if group is None or group not in seen:
            if group is not None:
                seen.add(group)
            order.append(index)
        else:
            waiting.append((index, len(order) + gap))
    order.extend(index for index, _ in waiting)
    return order


def prefix_group(doc: Any) -> Hashable | None:
    """What a request's prompt shares a long prefix with, read from its lm-eval document:
    the user (PersonalLLM, custom data: the history comes first), else the pair (both
    orders share rules, profile and question), else None."""
    if not isinstance(doc, dict):
        return None
    user = doc.get("user_id")
    if user is not None:
        return ("user", str(user))
    pair = doc.get("pair_key")
    return ("pair", str(pair)) if pair is not None else None

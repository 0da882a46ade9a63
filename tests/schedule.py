"""The order the xdist workers collect the tests in, so that the run's first split hands
each worker its share of the slow tests (tests/conftest.py; docs/development.md
"Running the tests").

pytest-xdist's ``worksteal`` scheduler deals the collected list out once, in contiguous
slices (the first ``N // workers`` tests to the first worker, and so on), and later lets
an idle worker take the tail of the longest queue. With the slow tests merely first, the
first slice held nearly all of them and one worker ran them one after another while the
others ran the quick ones. Here each slice starts with a share of the slow tests and is
filled up with quick ones, so every worker starts on long tests and the stealing at the
end moves only quick ones.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def first_slices(total: int, workers: int) -> list[int]:
    """The sizes of the slices ``worksteal`` deals out first.

    total: how many tests were collected. workers: how many workers are up (xdist's
    ``workercount``)."""
    sizes = []
    left = total
    for i in range(workers):
        size = left // (workers - i)
        sizes.append(size)
        left -= size
    return sizes


def worksteal_order(items: Sequence[T], workers: int, is_slow: Callable[[T], bool],
                    unit: Callable[[T], Hashable]) -> list[T]:
    """The items reordered so that each of the first slices starts with its share of the
    slow ones (by count), the quick ones filling each slice in their collected order.

    items: the collected tests, in the order they were collected. workers: the number of
    xdist workers. is_slow: whether a test is a long one. unit: a key that keeps slow
    tests together on one worker when they share an expensive module-scoped fixture (the
    ``training`` tests all need the same trained plain RM); every other test its own key.
    """
    if workers < 2 or not items:
        return list(items)
    units: dict[Hashable, list[T]] = {}
    quick: list[T] = []
    for item in items:
        if is_slow(item):
            units.setdefault(unit(item), []).append(item)
        else:
            quick.append(item)
    sizes = first_slices(len(items), workers)
    slices: list[list[T]] = [[] for _ in sizes]
    # Biggest units first, each to the slice with the fewest slow tests that still has
    # room for it (or the emptiest one when none has): a longest-first greedy deal.
    for group in sorted(units.values(), key=len, reverse=True):
        fits = [i for i in range(len(sizes)) if sizes[i] - len(slices[i]) >= len(group)]
        pick = min(fits or range(len(sizes)), key=lambda i: (len(slices[i]), -(sizes[i] - len(slices[i]))))
        slices[pick].extend(group)
    order: list[T] = []
    rest = iter(quick)
    for size, chosen in zip(sizes, slices):
        order.extend(chosen)
        for _ in range(size - len(chosen)):
            item = next(rest, None)
            if item is None:
                break
            order.append(item)
    order.extend(rest)
    return order

"""Length-sorted batches: similar lengths share a batch, so little compute goes to padding."""

from __future__ import annotations

from collections.abc import Sequence


def sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into batches, longest first.

    Longest first means an out-of-memory error, if any, shows up at the start of a
    run rather than after most of it. Equal lengths keep their original order, so
    the grouping is deterministic.

    Args:
        lengths: token count of each input.
        batch_size: most inputs per batch.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]

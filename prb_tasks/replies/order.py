"""Position assignment of the official single-order protocol.

The official script seeds Python's ``random`` with 42 once per subset and then, for
each row in dataset order, draws ``random.random() < 0.5``: true puts the chosen
answer in position A. Computing it over the whole subset before any sharding or
``--limit`` keeps every row's position identical to the official run.
"""

from __future__ import annotations

import random

OFFICIAL_SEED = 42


def official_positions(n_rows: int, seed: int = OFFICIAL_SEED) -> list[bool]:
    """For each of ``n_rows`` rows in dataset order: True if chosen is shown as A.

    Args:
        n_rows: rows in the subset.
        seed: the seed the official script uses.
    """
    # A private generator gives the same draws as seeding the global one, without
    # disturbing anybody else's use of ``random``.
    rng = random.Random(seed)
    return [rng.random() < 0.5 for _ in range(n_rows)]

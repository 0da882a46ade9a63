"""How often two rankings of the same models disagree on a pair of models.

``prb validity`` ranks reward models by benchmark accuracy and by downstream gain; a pair
of models whose order *flips* between the two is a pair where picking the more accurate
model picks the worse one downstream. Without ties, the flipped share is ``(1 - tau) / 2``
for Kendall's tau.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Flips:
    """Pairs of models ordered one way by the first values and the other way by the second.

    Attributes:
        flipped: pairs in opposite orders.
        ordered: pairs strictly ordered by both (a tie on either side orders nothing).
        pairs: all pairs of models.
    """

    flipped: int
    ordered: int
    pairs: int

    @property
    def share(self) -> float | None:
        """Flipped pairs among the pairs both sides order (None when none are ordered)."""
        return self.flipped / self.ordered if self.ordered else None


def flips(first: np.ndarray, second: np.ndarray) -> Flips:
    """Count the pairs of models whose order differs between two sets of values.

    Args:
        first: per model, the value that ranks it first (benchmark accuracy).
        second: per model, the value that ranks it second (downstream gain).
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    i, j = np.triu_indices(len(a), k=1)
    sa, sb = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    ordered = (sa != 0) & (sb != 0)
    return Flips(int(np.sum(ordered & (sa != sb))), int(np.sum(ordered)), len(i))

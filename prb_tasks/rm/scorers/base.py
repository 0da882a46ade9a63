"""The interface every scorer implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from prb_tasks.rm.inputs import RMInput


class Scorer(Protocol):
    """Maps inputs to one reward each; higher means preferred."""

    name: str

    def score(self, items: Sequence[RMInput]) -> list[float]:
        """Rewards for ``items``, in order."""
        ...

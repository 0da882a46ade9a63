"""The interface every scorer implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.score_cache import ScorerIdentity

Report = Callable[[Sequence[int], Sequence[float]], None]
"""Called with (positions in the ``items`` passed to ``score``, their rewards) as soon as
some are done, so they can be cached and counted before the rest finish."""


class Scorer:
    """Maps inputs to one reward each; higher means preferred.

    Attributes:
        name: short label for progress output.
        identity: what the score depends on besides the input; ``None`` means the
            scorer is too cheap to be worth caching.
    """

    name: str = "scorer"
    identity: ScorerIdentity | None = None

    def formatted(self, item: RMInput) -> str:
        """The exact input the scorer reads for ``item`` (part of the cache key)."""
        raise NotImplementedError

    def check(self, items: Sequence[RMInput]) -> None:
        """Refuse (one line, before anything is scored) inputs this scorer must not score.

        Nothing by default; a ``prb train`` checkpoint refuses the users and rows it was
        trained on (:mod:`prb_tasks.train.provenance`).

        Args:
            items: every response of the call.
        """

    def fixed_batches(self, items: Sequence[RMInput]) -> list[list[int]] | None:
        """Batches that must be scored exactly as given.

        None (the default) when batching never changes a score.

        A scorer whose scores depend on their batch-mates (half precision, padding)
        returns the partition of ``range(len(items))`` it reproduces; each batch is
        then passed to :meth:`score` whole, and cached scores are reused only when
        their whole batch is.
        """
        return None

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        """Rewards for ``items``, in order.

        Args:
            items: the responses to score.
            report: progress callback, see :data:`Report`.
        """
        raise NotImplementedError

    def notes(self) -> list[str]:
        """Lines to print at the end of a run (e.g. how many inputs were truncated)."""
        return []

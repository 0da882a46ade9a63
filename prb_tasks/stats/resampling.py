"""What a report's intervals and tests resample, decided once from the data.

Data that names its users (``user_id`` in the documents: PersonalLLM, your own data,
any family that adds it) is resampled by user, since one user's pairs are not
independent; data without users (Personalized RewardBench: one pair per asker) is
resampled by pair, within each subset. Every interval and paired test of the report
goes through :class:`Design`, so both kinds of data are handled by the same code and
the report can say which unit it used and how many there were.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

import numpy as np

from prb_tasks.stats.clusters import cluster_bootstrap, cluster_codes, cluster_means, cluster_sign_flip
from prb_tasks.stats.pairs import Interval, McNemar, bootstrap, mcnemar

Unit = Literal["pairs", "users"]

UNITS_IN_BRIEF = ("whole pairs within subsets (exact McNemar test) where pairs come from different people, "
                  "whole users with all their pairs (user-level sign-flip test) where the data names its users")


@dataclass(frozen=True)
class Design:
    """How a list of pairs is resampled.

    Attributes:
        unit: ``pairs`` (within subsets) or ``users`` (whole users, all their pairs).
        subsets: per pair, its subset.
        clusters: per pair, its user's code (``users`` only; a pair without a user
            id in data that has them is its own user).
    """

    unit: Unit
    subsets: np.ndarray
    clusters: np.ndarray | None = None

    @property
    def units(self) -> int:
        """How many units there are: pairs, or users."""
        if self.clusters is None:
            return len(self.subsets)
        return int(len(np.unique(self.clusters)))

    def label(self) -> str:
        """``212 users`` / ``2830 pairs``: what the report prints."""
        return f"{self.units} {self.unit}"

    def only(self, mask: np.ndarray) -> Design:
        """The same design restricted to the pairs where ``mask`` is true."""
        clusters = None if self.clusters is None else cluster_codes(self.clusters[mask])
        return Design(self.unit, self.subsets[mask], clusters)

    def _strata(self, values: np.ndarray) -> list[np.ndarray]:
        by_subset: dict[str, list[int]] = defaultdict(list)
        for i, name in enumerate(self.subsets.tolist()):
            by_subset[name].append(i)
        return [values[np.array(ix)] for _, ix in sorted(by_subset.items())]

    def interval(self, values: np.ndarray, macro: bool = False) -> Interval | None:
        """Mean of per-pair ``values`` with a 95% interval from resampling this design's unit.

        Args:
            values: per pair, aligned with the design.
            macro: the plain mean of the subset means instead of the pooled mean.
        """
        values = np.asarray(values, dtype=float)
        if self.clusters is None:
            return bootstrap(self._strata(values), macro=macro)
        return cluster_bootstrap(values, self.clusters, self.subsets, macro=macro)

    def user_macro(self, values: np.ndarray) -> Interval | None:
        """Each user's mean, averaged over users (every user counts the same).

        With an interval from resampling users; None when the data has no users.
        """
        if self.clusters is None or not len(values):
            return None
        means = cluster_means(values, self.clusters)
        return cluster_bootstrap(means, np.arange(len(means)))

    def paired_test(self, first: np.ndarray, second: np.ndarray) -> McNemar:
        """Exact test of two models' per-pair scores on these pairs.

        By pairs: McNemar's exact test (or its sign-flip generalisation). By users: the
        user-level sign-flip test of the summed differences. The discordant counts
        are pairs either way.
        """
        if self.clusters is None:
            return mcnemar(first, second)
        diffs = np.asarray(first, float) - np.asarray(second, float)
        differ = ~np.isclose(diffs, 0.0)
        return McNemar(int(np.sum(differ & (diffs > 0))), int(np.sum(differ & (diffs < 0))),
                       cluster_sign_flip(diffs, self.clusters))


def design_for(keys: list[str], subsets: list[str], users: list[str | None]) -> Design:
    """The design of a list of pairs: by users when any pair names its user, else by pairs.

    Args:
        keys: per pair, its key (names a pair without a user when others have one).
        subsets: per pair, its subset.
        users: per pair, its ``user_id`` or None.
    """
    strata = np.array(subsets, dtype=object)
    if not any(u is not None for u in users):
        return Design("pairs", strata)
    labels = [f"user:{u}" if u is not None else f"pair:{k}" for k, u in zip(keys, users)]
    return Design("users", strata, cluster_codes(labels))

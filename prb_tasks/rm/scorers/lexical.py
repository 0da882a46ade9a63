"""Baselines that need no model: answer length and BM25 overlap with the profile."""

from __future__ import annotations

from collections.abc import Sequence

from prb_tasks.data import profile_store
from prb_tasks.rm.inputs import RMInput
from prb_tasks.text.bm25 import BM25Index


class LengthScorer:
    """Reward = the response's length in characters (the longer answer wins).

    A floor every RM should beat: the benchmark pairs are built so length alone does
    not tell chosen from rejected.
    """

    name = "length"

    def score(self, items: Sequence[RMInput]) -> list[float]:
        return [float(len(item.response.strip())) for item in items]


class BM25ProfileScorer:
    """Reward = BM25 similarity between the response and the user's past posts.

    The posts form the BM25 collection (so idf reflects this user's vocabulary) and
    the response is the query; the reward is the sum over posts. It asks: does the
    answer talk about the things this user writes about?
    """

    name = "bm25"

    def __init__(self) -> None:
        self._indexes: dict[str, BM25Index] = {}

    def _index(self, key: str | None) -> BM25Index:
        if key is None:
            raise ValueError(
                "prb: scorer=bm25 needs the user's profile, which only prb's scalar tasks "
                "provide (e.g. personalized_rb_scalar, personalized_rb_sample_scalar)"
            )
        if key not in self._indexes:
            self._indexes[key] = BM25Index(profile_store.lookup(key))
        return self._indexes[key]

    def score(self, items: Sequence[RMInput]) -> list[float]:
        return [float(sum(self._index(item.profile_key).scores(item.response))) for item in items]

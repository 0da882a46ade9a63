"""Baselines that need no model: answer length and BM25 overlap with the profile."""

from __future__ import annotations

from collections.abc import Sequence

from prb_tasks.data import profile_store
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.scorers.base import Report, Scorer
from prb_tasks.text.bm25 import BM25Index


def profile_posts(key: str | None, scorer: str) -> tuple[str, ...]:
    """The user's posts behind a document's ``profile_key``.

    Args:
        key: the document's profile key (None outside prb's scalar tasks).
        scorer: scorer name, for the error message.
    """
    if key is None:
        raise RMError(
            f"prb-rm: scorer={scorer} needs the user's profile, which only prb's scalar tasks "
            "provide (e.g. personalized_rb_scalar, personalized_rb_sample_scalar)"
        )
    return profile_store.lookup(key)


class LengthScorer(Scorer):
    """Reward = the response's length in characters (the longer answer wins).

    A floor every RM should beat: the benchmark pairs are built so length alone does
    not tell chosen from rejected.
    """

    name = "length"

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        rewards = [float(len(item.response.strip())) for item in items]
        if report:
            report(range(len(items)), rewards)
        return rewards


class BM25ProfileScorer(Scorer):
    """Reward = BM25 similarity between the response and the user's past posts.

    The posts form the BM25 collection (so idf reflects this user's vocabulary) and
    the response is the query; the reward is the sum over posts. It asks: does the
    answer talk about the things this user writes about?
    """

    name = "bm25"

    def __init__(self) -> None:
        self._indexes: dict[str, BM25Index] = {}

    def _index(self, key: str | None) -> BM25Index:
        posts = profile_posts(key, self.name)
        assert key is not None
        if key not in self._indexes:
            self._indexes[key] = BM25Index(posts)
        return self._indexes[key]

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        rewards = [float(sum(self._index(item.profile_key).scores(item.response))) for item in items]
        if report:
            report(range(len(items)), rewards)
        return rewards

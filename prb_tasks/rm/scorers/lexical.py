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

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        # One profile's responses are scored together and its index dropped after: an
        # index per profile kept for the whole run held ~2 GB on the full benchmark.
        by_profile: dict[str | None, list[int]] = {}
        for n, item in enumerate(items):
            by_profile.setdefault(item.profile_key, []).append(n)
        rewards = [0.0] * len(items)
        for key, positions in by_profile.items():
            index = BM25Index(profile_posts(key, self.name))
            scored = [float(sum(index.scores(items[n].response))) for n in positions]
            for n, reward in zip(positions, scored):
                rewards[n] = reward
            if report:
                report(positions, scored)
        return rewards

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


class ProfileWatch:
    """Reads documents' profiles for a scorer and remembers which ones held no posts.

    A profile scorer given no posts scores both responses of a pair alike, so every such
    pair ties; the run must say so rather than report a silent near-zero accuracy.
    """

    def __init__(self) -> None:
        self.seen: set[str | None] = set()
        self.empty: set[str | None] = set()

    def posts(self, key: str | None, scorer: str) -> tuple[str, ...]:
        """The posts behind ``key`` (see :func:`profile_posts`), counted.

        Args:
            key: the document's profile key.
            scorer: scorer name, for messages.
        """
        posts = profile_posts(key, scorer)
        self.seen.add(key)
        if not any(p.strip() for p in posts):
            self.empty.add(key)
        return posts

    def notes(self, scorer: str) -> list[str]:
        """One warning line when some documents had no posts; else nothing.

        Args:
            scorer: scorer name, for the message.
        """
        if not self.empty:
            return []
        return [f"warning: scorer={scorer} found no profile posts or history for {len(self.empty)} of "
                f"{len(self.seen)} pairs, so it scored both answers of each alike and they tie (ties count "
                "wrong); use data where users have posts or earlier preferences, or another scorer"]


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
        self.watch = ProfileWatch()

    def notes(self) -> list[str]:
        return self.watch.notes(self.name)

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        # One profile's responses are scored together and its index dropped after: an
        # index per profile kept for the whole run held ~2 GB on the full benchmark.
        by_profile: dict[str | None, list[int]] = {}
        for n, item in enumerate(items):
            by_profile.setdefault(item.profile_key, []).append(n)
        rewards = [0.0] * len(items)
        for key, positions in by_profile.items():
            index = BM25Index(self.watch.posts(key, self.name))
            scored = [float(sum(index.scores(items[n].response))) for n in positions]
            for n, reward in zip(positions, scored):
                rewards[n] = reward
            if report:
                report(positions, scored)
        return rewards

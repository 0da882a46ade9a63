"""Okapi BM25 over a small in-memory collection (a user's posts).

A user's profile is a few hundred posts at most, so a dictionary-based index is
fast enough and avoids a dependency.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Function words carry no signal about what a user cares about.
_STOP = frozenset(
    """a an and are as at be been but by can could did do does for from had has have
    how i i'm if in into is it it's its just me my of on or our so than that the their
    them then there these they this to too up us was we were what when where which who
    why will with would you your""".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


class BM25Index:
    """BM25 scores of a query against each document of a fixed collection.

    Args:
        documents: the collection (e.g. a user's posts).
        k1: term-frequency saturation.
        b: length normalisation strength.
    """

    def __init__(self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self._docs = [Counter(tokenize(d)) for d in documents]
        self._lengths = [sum(c.values()) for c in self._docs]
        n = len(self._docs)
        self._avg = (sum(self._lengths) / n) if n else 0.0
        df: Counter[str] = Counter()
        for counts in self._docs:
            df.update(counts.keys())
        # The "+1" form keeps idf positive even for terms in most posts.
        self._idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1 = k1
        self.b = b

    def __len__(self) -> int:
        return len(self._docs)

    def scores(self, query: str) -> list[float]:
        """BM25 score of ``query`` against every document, in collection order."""
        terms = Counter(tokenize(query))
        out: list[float] = []
        for counts, length in zip(self._docs, self._lengths):
            norm = self.k1 * (1.0 - self.b + self.b * (length / self._avg if self._avg else 0.0))
            total = 0.0
            for term, qtf in terms.items():
                tf = counts.get(term)
                if tf:
                    total += qtf * self._idf[term] * tf * (self.k1 + 1.0) / (tf + norm)
            out.append(total)
        return out

    def top_k(self, query: str, k: int) -> list[int]:
        """Indices of the ``k`` best documents; ties keep collection order."""
        scored = self.scores(query)
        order = sorted(range(len(scored)), key=lambda i: (-scored[i], i))
        return order[: max(k, 0)]

"""Pick the user's past posts most relevant to a question (profile variants)."""

from __future__ import annotations

from dataclasses import dataclass

from prb_tasks.data.personalized_rb.schema import ProfilePost
from prb_tasks.text.bm25 import BM25Index

DEFAULT_K = 5
DEFAULT_MAX_POST_CHARS = 1000


@dataclass(frozen=True)
class SelectedPost:
    """A post shown to the judge: its rank (1-based), category, and bounded text."""

    rank: int
    id: str
    category: str
    text: str


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters at a word boundary, marking the cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def select_posts(
    question: str,
    profile: list[ProfilePost],
    k: int = DEFAULT_K,
    max_chars: int = DEFAULT_MAX_POST_CHARS,
) -> list[SelectedPost]:
    """The ``k`` posts ranked highest by BM25 relevance to ``question``.

    Args:
        question: the query.
        profile: the user's posts.
        k: how many posts to keep.
        max_chars: longest text kept per post; longer posts are truncated.
    """
    if k <= 0 or not profile:
        return []
    index = BM25Index([p.text for p in profile])
    return [
        SelectedPost(rank=r, id=profile[i].id, category=profile[i].category,
                     text=truncate(profile[i].text, max_chars))
        for r, i in enumerate(index.top_k(question, k), start=1)
    ]

"""Pick the user's past posts most relevant to a question (profile-aware variants).

Two retrievers rank *all* posts of a profile against the question:

- ``bm25`` (default): Okapi BM25 over the user's posts (:mod:`prb_tasks.text.bm25`);
- ``embedding``: dense, as the benchmark authors do (:mod:`prb_tasks.prompts.dense`),
  with all-MiniLM-L6-v2 offline.

The top ``k`` are shown, each cut to ``max_post_chars`` (0 keeps the text exactly as
written, as the authors do). Rankings are cached per (retriever, question, posts), in
memory and on disk (``<prb cache>/retrieval``), so a later run, another task variant
or another ``k`` reuses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prb_tasks.data.personalized_rb.schema import ProfilePost
from prb_tasks.prompts.rank_cache import rank_cache, ranking_key
from prb_tasks.text.bm25 import BM25Index

DEFAULT_K = 5
DEFAULT_MAX_POST_CHARS = 1000
RETRIEVERS = ("bm25", "embedding")
# BM25's identity in cache keys: bump the version when tokenization or scoring changes.
_BM25_IDENTITY = "bm25|k1=1.5|b=0.75|tokenizer=1"


@dataclass(frozen=True)
class SelectedPost:
    """A post shown to the judge: its rank (1-based), category, and bounded text."""

    rank: int
    id: str
    category: str
    text: str


@dataclass(frozen=True)
class RetrievalOptions:
    """How posts are picked.

    Attributes:
        retriever: ``bm25`` or ``embedding``.
        k: how many posts to keep.
        max_post_chars: longest text kept per post; 0 keeps every post whole.
        device: where the embedding model runs (``auto``, ``cpu``, ``cuda``...).
    """

    retriever: str = "bm25"
    k: int = DEFAULT_K
    max_post_chars: int = DEFAULT_MAX_POST_CHARS
    device: str = "auto"


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters at a word boundary, marking the cut.

    Whitespace runs are collapsed. ``limit`` 0 returns the text unchanged.
    """
    if limit <= 0:
        return text
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def format_posts(posts: Sequence[SelectedPost]) -> str:
    """Posts as the authors lay them out: ``Post i (Category: c):`` then the text, one
    post after the other, joined by newlines."""
    return "\n".join(f"Post {p.rank} (Category: {p.category}):\n{p.text}" for p in posts)


def retrieval_cache_dir() -> Path:
    """Where rankings are kept: ``<prb cache>/retrieval``."""
    from prb_tasks.resources import cache_root

    return cache_root() / "retrieval"


def _identity(retriever: str) -> str:
    if retriever == "embedding":
        from prb_tasks.text.encoder import encoder_identity

        return "dense-dot|" + encoder_identity("retriever=embedding")
    return _BM25_IDENTITY


def rank_profiles(
    queries: Sequence[tuple[str, Sequence[str]]],
    retriever: str = "bm25",
    device: str = "auto",
    progress: bool = True,
) -> list[tuple[int, ...]]:
    """The full ranking (post indices, best first) of each row's posts.

    Args:
        queries: per row, the question and the post texts in profile order.
        retriever: ``bm25`` or ``embedding``.
        device: where the embedding model runs (dense only).
        progress: show a progress bar while embedding.
    """
    if retriever not in RETRIEVERS:
        raise ValueError(f"unknown retriever {retriever!r}; expected one of {RETRIEVERS}")
    identity = _identity(retriever)
    cache = rank_cache(retrieval_cache_dir())
    keys = [ranking_key(identity, question, posts) for question, posts in queries]
    rankings: list[tuple[int, ...] | None] = [
        cache.get(key, len(posts)) for key, (_, posts) in zip(keys, queries)
    ]
    # Identical rows (same question and profile) are ranked once.
    todo: dict[str, int] = {}
    for index, ranking in enumerate(rankings):
        if ranking is None:
            todo.setdefault(keys[index], index)
    if todo:
        rows = list(todo.values())
        if retriever == "embedding":
            from prb_tasks.prompts.dense import rank_dense
            from prb_tasks.text.encoder import shared_encoder

            def store(chunk: list[int], done: list[list[int]]) -> None:
                cache.put_many([(keys[rows[i]], order) for i, order in zip(chunk, done)])

            rank_dense([queries[i] for i in rows], shared_encoder(device), on_chunk=store, progress=progress)
        else:
            cache.put_many([
                (keys[i], BM25Index(list(queries[i][1])).top_k(queries[i][0], len(queries[i][1])))
                for i in rows
            ])
        rankings = [cache.get(key, len(posts)) for key, (_, posts) in zip(keys, queries)]
    return [r if r is not None else () for r in rankings]


def select_posts_many(
    queries: Sequence[tuple[str, Sequence[ProfilePost]]], options: RetrievalOptions
) -> list[list[SelectedPost]]:
    """The top ``options.k`` posts of each row.

    Args:
        queries: per row, the question and the user's posts.
        options: retriever, k, truncation, device.
    """
    if options.k <= 0:
        return [[] for _ in queries]
    rankings = rank_profiles(
        [(question, [p.text for p in profile]) for question, profile in queries],
        options.retriever, options.device,
    )
    return [
        [
            SelectedPost(rank=r, id=profile[i].id, category=profile[i].category,
                         text=truncate(profile[i].text, options.max_post_chars))
            for r, i in enumerate(ranking[: options.k], start=1)
        ]
        for (_, profile), ranking in zip(queries, rankings)
    ]


def select_posts(
    question: str,
    profile: list[ProfilePost],
    k: int = DEFAULT_K,
    max_chars: int = DEFAULT_MAX_POST_CHARS,
    retriever: str = "bm25",
) -> list[SelectedPost]:
    """The ``k`` posts of one profile ranked highest for ``question``.

    Args:
        question: the query.
        profile: the user's posts.
        k: how many posts to keep.
        max_chars: longest text kept per post (0: whole posts).
        retriever: ``bm25`` or ``embedding``.
    """
    options = RetrievalOptions(retriever=retriever, k=k, max_post_chars=max_chars)
    return select_posts_many([(question, profile)], options)[0]

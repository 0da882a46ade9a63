"""Pick the user's past posts most relevant to a question (profile-aware variants).

Two retrievers rank *all* posts of a profile against the question:

- ``bm25`` (default): Okapi BM25 over the user's posts (:mod:`prb_tasks.text.bm25`,
  computed for many profiles at once by :mod:`prb_tasks.text.bm25_columns`);
- ``embedding``: dense, as the benchmark authors do (:mod:`prb_tasks.prompts.dense`),
  with all-MiniLM-L6-v2 offline;
- ``contriever``: dense with the authors' own encoder, ``facebook/contriever-msmarco``
  (:mod:`prb_tasks.text.contriever`; from the Hugging Face cache or a local folder,
  ``RetrievalOptions.model``).

The top ``k`` are shown, each cut to ``max_post_chars`` (0 keeps the text exactly as
written, as the authors do). Rankings are cached per (retriever, question, posts), in
memory and on disk (``<prb cache>/retrieval``), so a later run, another task variant
or another ``k`` reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prb_tasks.data.personalized_rb.schema import ProfilePost
from prb_tasks.prompts.rank_cache import rank_cache, ranking_key, ranking_key_of_bytes

if TYPE_CHECKING:
    from prb_tasks.data.personalized_rb.columnar import ProfileColumn

DEFAULT_K = 5
DEFAULT_MAX_POST_CHARS = 1000
RETRIEVERS = ("bm25", "embedding", "contriever")
DENSE = ("embedding", "contriever")
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
        dtype: the embedding model's precision (``float32``, ``bfloat16``, ``float16`` or
            ``auto``: bfloat16 where the hardware computes it natively).
        backend: what runs the embedding model: ``torch`` or ``openvino`` (CPU only).
        model: ``contriever``'s checkpoint, a hub name or local folder (None:
            ``facebook/contriever-msmarco``).
    """

    retriever: str = "bm25"
    k: int = DEFAULT_K
    max_post_chars: int = DEFAULT_MAX_POST_CHARS
    device: str = "auto"
    dtype: str = "float32"
    backend: str = "torch"
    model: str | None = None


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
    from prb_tasks.common.resources import cache_root

    return cache_root() / "retrieval"


def retriever_identity(retriever: str, dtype: str = "float32", backend: str = "torch",
                       model: str | None = None) -> str:
    """What determines a ranking: the retriever and, for dense, the encoder, its
    precision (``dtype``, resolved: not ``auto``) and its backend (``model``:
    ``contriever``'s checkpoint), for cache keys."""
    if retriever == "contriever":
        from prb_tasks.text.contriever import DEFAULT_MODEL, model_identity

        return "contriever|" + model_identity(model or DEFAULT_MODEL)
    if retriever == "embedding":
        from prb_tasks.text.encoder import encoder_identity

        return "dense-dot|" + encoder_identity("retriever=embedding", dtype, backend)
    return _BM25_IDENTITY


def resolved_dtype(retriever: str, device: str, dtype: str, backend: str = "torch") -> str:
    """The precision dense retrieval runs in (``auto`` resolved for ``device`` and ``backend``); float32 for BM25."""
    if retriever != "embedding" or dtype != "auto":
        return dtype if retriever == "embedding" else "float32"
    from prb_tasks.text.encoder import choose_dtype

    if backend != "torch":
        return choose_dtype("auto", "cpu", backend)
    from prb_tasks.common.devices import resolve_device

    return choose_dtype("auto", resolve_device(device))


def rank_profiles(
    queries: Sequence[tuple[str, Sequence[str]]],
    retriever: str = "bm25",
    device: str = "auto",
    progress: bool = True,
    dtype: str = "float32",
    backend: str = "torch",
    model: str | None = None,
) -> list[tuple[int, ...]]:
    """The full ranking (post indices, best first) of each row's posts.

    Args:
        queries: per row, the question and the post texts in profile order.
        retriever: ``bm25`` or ``embedding``.
        device: where the embedding model runs (dense only).
        progress: show a progress bar while embedding.
        dtype: the embedding model's precision (dense only; see :class:`RetrievalOptions`).
        backend: what runs the embedding model (dense only; see :class:`RetrievalOptions`).
        model: ``contriever``'s checkpoint (see :class:`RetrievalOptions`).
    """
    dtype, identity = _identity_checked(retriever, device, dtype, backend, model)
    keys = [ranking_key(identity, question, posts) for question, posts in queries]

    def lists(start: int, stop: int) -> Any:
        import pyarrow as pa

        return pa.array([list(posts) for _, posts in queries[start:stop]], pa.list_(pa.string()))

    return _rank_cached(
        keys, [len(posts) for _, posts in queries], [q for q, _ in queries], retriever, device, dtype, backend,
        progress, lists, lambda rows: [(queries[i][0], list(queries[i][1])) for i in rows], model,
    )


def rank_columns(
    questions: Sequence[str],
    profiles: ProfileColumn,
    retriever: str = "bm25",
    device: str = "auto",
    progress: bool = True,
    dtype: str = "float32",
    backend: str = "torch",
    model: str | None = None,
) -> list[tuple[int, ...]]:
    """:func:`rank_profiles` for a subset held as Arrow columns: the same rankings and cache
    keys, computed from the column's bytes without a Python string per post.

    Args:
        questions: one per row.
        profiles: every row's posts.
        retriever: ``bm25`` or ``embedding``.
        device: where the embedding model runs (dense only).
        progress: show a progress bar while embedding.
        dtype: the embedding model's precision (dense only; see :class:`RetrievalOptions`).
        backend: what runs the embedding model (dense only; see :class:`RetrievalOptions`).
        model: ``contriever``'s checkpoint (see :class:`RetrievalOptions`).
    """
    dtype, identity = _identity_checked(retriever, device, dtype, backend, model)
    keys = [ranking_key_of_bytes(identity, question, profiles.post_bytes(row))
            for row, question in enumerate(questions)]
    return _rank_cached(
        keys, [profiles.count(row) for row in range(len(questions))], list(questions), retriever, device, dtype,
        backend, progress,
        profiles.text_lists, lambda rows: [(questions[i], profiles.texts(i)) for i in rows], model,
    )


def _identity_checked(retriever: str, device: str, dtype: str, backend: str = "torch",
                      model: str | None = None) -> tuple[str, str]:
    """The resolved precision and the ranking identity, for a known retriever (and, for
    dense, a backend that can run here: a one-line error before any work otherwise)."""
    if retriever not in RETRIEVERS:
        raise ValueError(f"unknown retriever {retriever!r}; expected one of {RETRIEVERS}")
    dtype = resolved_dtype(retriever, device, dtype, backend)
    if retriever == "embedding" and backend != "torch":
        from prb_tasks.text.encoder import check_backend

        check_backend("retriever=embedding", backend, dtype, device)
    return dtype, retriever_identity(retriever, dtype, backend, model)


def _runs(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as (start, stop) ranges of consecutive rows."""
    out: list[tuple[int, int]] = []
    for row in rows:
        if out and out[-1][1] == row:
            out[-1] = (out[-1][0], row + 1)
        else:
            out.append((row, row + 1))
    return out


def _rank_cached(
    keys: Sequence[str],
    sizes: Sequence[int],
    questions: Sequence[str],
    retriever: str,
    device: str,
    dtype: str,
    backend: str,
    progress: bool,
    lists: Callable[[int, int], Any],
    texts: Callable[[list[int]], list[tuple[str, list[str]]]],
    model: str | None = None,
) -> list[tuple[int, ...]]:
    """Rankings from the cache, computing (and storing) the missing ones.

    Args:
        keys: each row's :func:`ranking_key`.
        sizes: each row's number of posts.
        questions: each row's question.
        retriever: ``bm25`` or ``embedding``.
        device: where the embedding model runs (dense only).
        dtype: the embedding model's precision, resolved (dense only).
        backend: what runs the embedding model (dense only).
        progress: show a progress bar while embedding.
        lists: rows ``start`` to ``stop`` as an Arrow ``list<string>`` of post texts (BM25).
        texts: the question and post texts of the given rows (dense).
        model: ``contriever``'s checkpoint (None: the default).
    """
    cache = rank_cache(retrieval_cache_dir())
    rankings: list[tuple[int, ...] | None] = [cache.get(key, size) for key, size in zip(keys, sizes)]
    # Identical rows (same question and profile) are ranked once.
    todo: dict[str, int] = {}
    for index, ranking in enumerate(rankings):
        if ranking is None:
            todo.setdefault(keys[index], index)
    if todo:
        rows = sorted(todo.values())
        if retriever in DENSE:
            from prb_tasks.prompts.dense import rank_dense

            if retriever == "contriever":
                from prb_tasks.text.contriever import DEFAULT_MODEL, shared_contriever

                encoder: Any = shared_contriever(model or DEFAULT_MODEL, device)
            else:
                from prb_tasks.text.encoder import shared_encoder

                encoder = shared_encoder(device, backend=backend)

            def store(chunk: list[int], done: list[list[int]]) -> None:
                cache.put_many([(keys[rows[i]], order) for i, order in zip(chunk, done)])

            rank_dense(texts(rows), encoder, on_chunk=store, progress=progress, dtype=dtype)
        else:
            from prb_tasks.text.bm25_columns import rank_lists

            for start, stop in _runs(rows):
                cache.put_many(list(zip(keys[start:stop], rank_lists(questions[start:stop], lists(start, stop)))))
        rankings = [cache.get(key, size) for key, size in zip(keys, sizes)]
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
        options.retriever, options.device, dtype=options.dtype, backend=options.backend, model=options.model,
    )
    return [
        _selected(options, [profile[i] for i in ranking[: options.k]])
        for (_, profile), ranking in zip(queries, rankings)
    ]


def select_posts_columns(
    questions: Sequence[str], batches: Iterable[tuple[int, ProfileColumn]], options: RetrievalOptions
) -> list[list[SelectedPost]]:
    """:func:`select_posts_many` for a subset held as Arrow columns, a batch of rows at a time.

    Args:
        questions: one per row.
        batches: (first row, posts of the next rows), covering every row in order.
        options: retriever, k, truncation, device.
    """
    if options.k <= 0:
        return [[] for _ in questions]
    selected: list[list[SelectedPost]] = []
    for start, profiles in batches:
        rankings = rank_columns(questions[start:start + len(profiles)], profiles, options.retriever, options.device,
                                dtype=options.dtype, backend=options.backend, model=options.model)
        selected.extend(_selected(options, profiles.posts(row, ranking[: options.k]))
                        for row, ranking in enumerate(rankings))
    if len(selected) != len(questions):
        raise ValueError(f"posts for {len(selected)} rows, questions for {len(questions)}")
    return selected


def _selected(options: RetrievalOptions, posts: Sequence[ProfilePost]) -> list[SelectedPost]:
    return [
        SelectedPost(rank=r, id=post.id, category=post.category, text=truncate(post.text, options.max_post_chars))
        for r, post in enumerate(posts, start=1)
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

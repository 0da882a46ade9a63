"""Dense post ranking: the authors' method, with the encoder we can ship offline.

The benchmark authors rank every post of a profile by the dot product between the
mean-pooled embedding of the question and of each post (``facebook/contriever-msmarco``,
inputs truncated to the model's limit). We do the same with all-MiniLM-L6-v2 (see
:mod:`prb_tasks.text.encoder`): raw mean-pooled vectors, dot product, all posts ranked.
The model differs (Contriever is a 110M-parameter BERT-base retriever trained on
MS MARCO; MiniLM-L6 is a 22M-parameter sentence-similarity model), so rankings are
close in spirit, not identical. ``retriever=contriever`` ranks here with their model
itself (:mod:`prb_tasks.text.contriever`).

Rows are embedded many at a time: posts of consecutive rows are pooled into chunks of
a few hundred (CPU) or thousand (GPU) texts, identical texts are embedded once, and each chunk is one
encoder call (batched by length inside). Finished chunks are handed to ``on_chunk`` so
a caller can store them before the next one starts (an interrupted run keeps them).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

# Texts per encoder call: large enough to batch well across rows (batches are sorted by
# length inside a call, so a larger pool leaves less padding: 5% more tokens than the
# texts hold at 1,024 texts per call in batches of 64 on the benchmark's posts, 14% at
# 256; 1.14x the texts per CPU-second in bench_retrieval.py), small enough that progress
# shows up often. A CPU embeds a few dozen posts a second, a GPU thousands.
CHUNK_TEXTS = {"cpu": 1024, "gpu": 4096}
# Above this many texts on a CPU, say up front what is coming and that it is cached.
_NOTICE_TEXTS = 20_000


def _chunks(queries: Sequence[tuple[str, Sequence[str]]], limit: int) -> list[list[int]]:
    chunks: list[list[int]] = []
    current: list[int] = []
    size = 0
    for index, (_, posts) in enumerate(queries):
        current.append(index)
        size += len(posts) + 1
        if size >= limit:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks


def rank_dense(
    queries: Sequence[tuple[str, Sequence[str]]],
    encoder: Any,
    on_chunk: Callable[[list[int], list[list[int]]], None] | None = None,
    chunk_texts: int | None = None,
    progress: bool = True,
    dtype: str = "float32",
) -> list[list[int]]:
    """Every post of every row, ranked by dot product with the row's question.

    Args:
        queries: per row, the question and the post texts.
        encoder: a :class:`~prb_tasks.text.encoder.SentenceEncoder`.
        on_chunk: called with the row indices and rankings of each finished chunk.
        chunk_texts: about how many texts go into one encoder call (default by device).
        progress: show a progress bar over posts.
        dtype: the encoder's precision (``float32``, ``bfloat16`` or ``float16``).
    """
    import numpy as np
    from tqdm.auto import tqdm

    total = sum(len(posts) + 1 for _, posts in queries)
    if total >= _NOTICE_TEXTS and encoder.device == "cpu":
        print(f"prb: dense retrieval embeds {total:,} texts of {len(queries):,} rows on the CPU "
              "(slow: hours for the full benchmark; a GPU is far faster); rankings are cached, so this happens "
              "once per data set",
              file=sys.stderr, flush=True)
    rankings: list[list[int]] = [[] for _ in queries]
    name = str(getattr(encoder, "name", "all-MiniLM-L6-v2")).rstrip("/").rsplit("/", 1)[-1]
    bar = tqdm(total=total, desc=f"prb: dense retrieval ({name})", unit="text",
               disable=not progress, file=sys.stderr)
    try:
        limit = chunk_texts or CHUNK_TEXTS["cpu" if encoder.device == "cpu" else "gpu"]
        for rows in _chunks(queries, limit):
            slot: dict[str, int] = {}
            for index in rows:
                question, posts = queries[index]
                for text in (question, *posts):
                    slot.setdefault(text, len(slot))
            vectors = encoder.encode(list(slot), normalize=False, dtype=dtype)
            done: list[list[int]] = []
            for index in rows:
                question, posts = queries[index]
                if posts:
                    scores = vectors[[slot[t] for t in posts]] @ vectors[slot[question]]
                    # Stable sort: equal scores keep profile order.
                    order = np.argsort(-scores, kind="stable").tolist()
                else:
                    order = []
                rankings[index] = order
                done.append(order)
            if on_chunk is not None:
                on_chunk(rows, done)
            bar.update(sum(len(queries[i][1]) + 1 for i in rows))
    finally:
        bar.close()
    return rankings

"""The posts each row shows, kept per data files, retriever, ``k`` and truncation.

Ranking every post of every profile is the expensive part of a profile-aware run's
start. A repeat run (another prompt template, another judge) only needs the few posts
each row shows, so they are kept here, keyed on a hash of the data files' bytes (or the
hub's fingerprint of the dataset), the subset, the retriever's identity, ``k`` and
``max_post_chars``: a repeat reads neither the profile column nor the per-row rankings
(:mod:`prb_tasks.prompts.rank_cache`, which still serves another ``k`` or truncation).

Kept in memory for the run (every variant that shows posts shares them) and on disk
next to the rankings, as JSON through :func:`prb_tasks.common.jsonstore.open_json_cache`
(never unpickled); a stored value of the wrong shape is ignored and recomputed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from prb_tasks.common.jsonstore import open_json_cache, read_json
from prb_tasks.prompts.retrieval import (
    RetrievalOptions,
    SelectedPost,
    resolved_dtype,
    retrieval_cache_dir,
    retriever_identity,
)

# Bump when what a stored selection means changes (layout, truncation rule).
VERSION = 1

_MEMORY: dict[str, list[list[SelectedPost]]] = {}


def selection_key(data_key: str, subset: str, options: RetrievalOptions) -> str:
    """Cache key of one subset's selected posts.

    Args:
        data_key: the data's content identity (hash of its files, or the hub fingerprint).
        subset: the subset's config name.
        options: retriever, k and truncation.
    """
    dtype = resolved_dtype(options.retriever, options.device, options.dtype, options.backend)
    identity = retriever_identity(options.retriever, dtype, options.backend, options.model)
    parts = [VERSION, data_key, subset, identity, options.k, options.max_post_chars]
    return "select:" + hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


def _decode(value: Any, rows: int) -> list[list[SelectedPost]] | None:
    if not isinstance(value, list) or len(value) != rows:
        return None
    out: list[list[SelectedPost]] = []
    for posts in value:
        if not isinstance(posts, list):
            return None
        row: list[SelectedPost] = []
        for rank, post in enumerate(posts, start=1):
            if not (isinstance(post, list) and len(post) == 3 and all(isinstance(x, str) for x in post)):
                return None
            row.append(SelectedPost(rank, post[0], post[1], post[2]))
        out.append(row)
    return out


def cached_selection(
    data_key: str | None,
    subset: str,
    options: RetrievalOptions,
    rows: int,
    compute: Callable[[], list[list[SelectedPost]]],
) -> list[list[SelectedPost]]:
    """The selected posts of every row: from memory, from disk, or computed and kept.

    Args:
        data_key: the data's content identity; None computes every time (nothing to key on).
        subset: the subset's config name.
        options: retriever, k and truncation.
        rows: how many rows the subset has (a stored value of another length is ignored).
        compute: ranks the posts when nothing is stored.
    """
    if data_key is None:
        return compute()
    key = selection_key(data_key, subset, options)
    hit = _MEMORY.get(key)
    if hit is not None:
        return hit
    disk = open_json_cache(retrieval_cache_dir())
    value, _refused = read_json(disk, key)
    selection = _decode(value, rows) if value is not None else None
    if selection is None:
        selection = compute()
        disk.set(key, json.dumps([[[p.id, p.category, p.text] for p in posts] for posts in selection],
                                 ensure_ascii=False))
    _MEMORY[key] = selection
    return selection

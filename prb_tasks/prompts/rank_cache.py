"""Rankings of a user's posts against a question, kept in memory and on disk.

A ranking depends only on the retriever (its identity string), the question and the
post texts, so it is keyed on a hash of exactly those: every task variant, ``k`` and
``max_post_chars`` reuses it, and another copy of the same data finds it too. Dense
retrieval of the full benchmark is the expensive case (all ~300k posts through an
encoder); after the first run it costs a disk read per row.

Stored values are JSON lists of post indices, through
:class:`~prb_tasks.common.jsonstore.JsonOnlyDisk` (never unpickled); a value that is not a
permutation of the profile's indices is ignored and recomputed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import diskcache

from prb_tasks.common.jsonstore import open_json_cache, read_json

# Bump when the meaning of a stored ranking changes.
KEY_VERSION = 1


def ranking_key(retriever: str, question: str, posts: Sequence[str]) -> str:
    """Cache key of one ranking: a hash of the retriever identity, question and posts.

    Args:
        retriever: identity of the ranking method (name, model, settings).
        question: the query.
        posts: the post texts, in profile order.
    """
    return ranking_key_of_bytes(retriever, question, (text.encode("utf-8") for text in posts))


def ranking_key_of_bytes(retriever: str, question: str, posts: Iterable[bytes | memoryview]) -> str:
    """:func:`ranking_key` from the posts' UTF-8 bytes (e.g. slices of an Arrow buffer).

    Args:
        retriever: identity of the ranking method.
        question: the query.
        posts: each post's text as UTF-8 bytes, in profile order.
    """
    digest = hashlib.sha256()
    digest.update(json.dumps([KEY_VERSION, retriever, question], ensure_ascii=False).encode("utf-8"))
    for data in posts:
        # Length-prefixed so no two different lists hash alike.
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return "rank:" + digest.hexdigest()


def _valid(value: object, size: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == size
        and all(isinstance(i, int) and not isinstance(i, bool) for i in value)
        and sorted(value) == list(range(size))
    )


class RankCache:
    """Rankings by :func:`ranking_key`: an in-process dict in front of a disk cache.

    Args:
        directory: disk cache folder, or None to keep rankings in memory only.
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._memory: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()
        self.refused = 0

    def _open(self) -> diskcache.Cache | None:
        # Opened on first use: a run whose rankings are all in memory never touches disk.
        return open_json_cache(self.directory) if self.directory is not None else None

    def get(self, key: str, size: int) -> tuple[int, ...] | None:
        """The stored ranking of a profile with ``size`` posts, or None."""
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                return hit
            disk = self._open()
            if disk is None:
                return None
            value, refused = read_json(disk, key)
            if value is None and not refused:
                return None
            if refused or not _valid(value, size):
                self.refused += 1
                return None
            ranking = self._memory[key] = tuple(value)
            return ranking

    def put_many(self, items: Sequence[tuple[str, Sequence[int]]]) -> None:
        """Keep rankings in memory and on disk (one transaction)."""
        with self._lock:
            for key, ranking in items:
                self._memory[key] = tuple(int(i) for i in ranking)
            disk = self._open()
            if disk is None or not items:
                return
            with disk.transact():
                for key, ranking in items:
                    disk.set(key, json.dumps([int(i) for i in ranking]))


_CACHES: dict[str, RankCache] = {}
_CACHES_LOCK = threading.Lock()


def rank_cache(directory: Path | None) -> RankCache:
    """The process-wide cache for ``directory`` (None: memory only)."""
    name = str(directory.resolve()) if directory is not None else ""
    with _CACHES_LOCK:
        cache = _CACHES.get(name)
        if cache is None:
            cache = _CACHES[name] = RankCache(directory)
        return cache

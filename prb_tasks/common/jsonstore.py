"""diskcache storage that holds JSON text only, for every prb cache.

diskcache unpickles stored values by default (CVE-2025-69872), so a cache folder
someone else could write to would be a way to run code here. :class:`JsonOnlyDisk`
stores only ``str`` and refuses, without unpickling, any entry that is not plain
text; each cache then checks that the text is one of its own JSON values.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import MODE_RAW, MODE_TEXT, UNKNOWN

from prb_tasks.common.private import private_files, private_folder


class UnsafeCacheEntry(Exception):
    """A stored entry that is not plain text (e.g. a pickle); it is never decoded."""


class JsonOnlyDisk(diskcache.Disk):
    """A diskcache ``Disk`` that stores and returns ``str`` only, never pickles."""

    def put(self, key: Any) -> tuple[Any, bool]:
        if not isinstance(key, str):
            raise TypeError("prb cache keys must be str")
        return super().put(key)

    def get(self, key: Any, raw: bool) -> Any:
        if not raw or not isinstance(key, str):
            raise UnsafeCacheEntry("cache key is not plain text")
        return key

    def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> Any:
        if read or not isinstance(value, str):
            raise TypeError("prb cache values must be JSON text")
        return super().store(value, read, key=key)

    def _write(self, full_path: str, iterator: Any, mode: str, encoding: str | None = None) -> Any:
        # A long value goes to a file of its own under two levels of folders: owner-only, like the
        # database (the cache folder's own mode already keeps others out; this keeps it so if moved).
        private_folder(Path(full_path).parent)
        size = super()._write(full_path, iterator, mode, encoding=encoding)
        private_files(Path(full_path).parent)
        return size

    def fetch(self, mode: int, filename: Any, value: Any, read: bool) -> str:
        # Decide from the stored mode *before* touching the payload: a pickle is
        # refused without being loaded.
        if read:
            raise UnsafeCacheEntry("file handles are not supported")
        if mode == MODE_RAW and isinstance(value, str):
            return value
        if mode == MODE_TEXT and isinstance(filename, str) and ".." not in Path(filename).parts:
            return super().fetch(mode, filename, value, read)
        raise UnsafeCacheEntry(f"cache entry stored in mode {mode} is not JSON text")


def new_json_store(directory: Path | str, keep_all: bool = False, size_limit: int = 2**34) -> diskcache.Cache:
    """A new JSON-only diskcache ``Cache`` on ``directory`` (created owner-only if missing); caller closes it.

    Args:
        directory: cache folder.
        keep_all: never evict (a judge cache is a record of money spent, not a hot-set
            cache); ``size_limit`` is then ignored.
        size_limit: bytes after which diskcache evicts the oldest entries.
    """
    # What was judged or scored (users' profiles, participants' reasons): owner-only, folder and files.
    private_folder(directory)
    if keep_all:
        # Several processes may write at once; wait up to 60 s for the lock instead of failing.
        cache = diskcache.Cache(str(directory), disk=JsonOnlyDisk, eviction_policy="none", size_limit=2**62,
                                statistics=False, timeout=60)
    else:
        cache = diskcache.Cache(str(directory), disk=JsonOnlyDisk, size_limit=size_limit)
    # SQLite gives its -wal and -shm files the database file's mode, so tightening it now covers them.
    private_files(directory)
    return cache


_OPEN: dict[str, diskcache.Cache] = {}
_OPEN_LOCK = threading.Lock()


def open_json_cache(directory: Path, size_limit: int = 2**34) -> diskcache.Cache:
    """The process-wide JSON-only cache in ``directory`` (created if missing).

    One ``Cache`` object per directory and process; threads share it (diskcache is
    thread-safe) and several processes may share the directory.

    Args:
        directory: cache folder.
        size_limit: bytes after which diskcache evicts the oldest entries.
    """
    path = str(directory.resolve())
    with _OPEN_LOCK:
        cache = _OPEN.get(path)
        if cache is None:
            cache = new_json_store(path, size_limit=size_limit)
            _OPEN[path] = cache
        return cache


def read_json(cache: diskcache.Cache, key: str) -> tuple[Any, bool]:
    """The JSON value stored under ``key``, and whether an entry had to be refused.

    Returns ``(None, False)`` when nothing is stored, ``(None, True)`` when the entry is
    not clean JSON text (never decoded further), else ``(value, False)``; the caller
    still checks that the value has the shape it stores.
    """
    try:
        text = cache.get(key)
    except UnsafeCacheEntry:
        return None, True
    if not isinstance(text, str):
        return None, False
    try:
        return json.loads(text), False
    except ValueError:
        return None, True

"""diskcache storage that holds JSON text only, for every prb cache.

diskcache unpickles stored values by default (CVE-2025-69872), so a cache folder
someone else could write to would be a way to run code here. :class:`JsonOnlyDisk`
stores only ``str`` and refuses, without unpickling, any entry that is not plain
text; each cache then checks that the text is one of its own JSON values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import MODE_RAW, MODE_TEXT, UNKNOWN


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

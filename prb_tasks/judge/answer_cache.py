"""The judge's answer cache on disk: one JSON document per answer, nothing else.

Stored through :class:`~prb_tasks.common.jsonstore.JsonOnlyDisk` (plain text only, never
unpickled); :class:`JudgeCache` then refuses any text that is not one of our JSON answers.

diskcache keeps data in SQLite (WAL), so several processes may share a folder and
every ``put`` is durable as soon as it returns: a run killed with ``kill -9`` keeps
every answer it had received.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import diskcache

from prb_tasks.common.jsonstore import JsonOnlyDisk, UnsafeCacheEntry, new_json_store
from prb_tasks.judge.options import CacheMode
from prb_tasks.judge.storage import storage_errors

_ANSWER_VERSION = 1


@dataclass(frozen=True)
class CachedAnswer:
    """One stored answer.

    Attributes:
        text: the completion exactly as returned to lm-eval.
        model: litellm model id that produced it.
        input_tokens: prompt tokens billed (None: not reported).
        output_tokens: completion tokens billed, reasoning included.
        reasoning_tokens: hidden reasoning tokens (None: not reported).
        cost: dollars it cost when it was made (None: price unknown).
        latency: seconds the call took.
        created: Unix time it was stored.
        profile: :func:`~prb_tasks.judge.request.answer_profile` of the request (None:
            stored before profiles existed).
        cached_input_tokens: of ``input_tokens``, those the provider read from its
            prompt cache (None: not reported, or stored before this was kept).
    """

    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    latency: float = 0.0
    created: float = 0.0
    profile: str | None = None
    cached_input_tokens: int | None = None

    def to_json(self) -> str:
        return json.dumps({"v": _ANSWER_VERSION, **asdict(self)}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> CachedAnswer:
        """Parse a stored document; raises :class:`UnsafeCacheEntry` if it is not ours."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            raise UnsafeCacheEntry("cache entry is not JSON") from None
        if not isinstance(data, dict) or data.get("v") != _ANSWER_VERSION or not isinstance(data.get("text"), str):
            raise UnsafeCacheEntry("cache entry is not a prb judge answer")

        def opt_int(name: str) -> int | None:
            value = data.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        def opt_num(name: str) -> float | None:
            value = data.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                return float(value)
            return None

        return cls(
            text=data["text"],
            model=str(data.get("model", "")),
            input_tokens=opt_int("input_tokens"),
            output_tokens=opt_int("output_tokens"),
            reasoning_tokens=opt_int("reasoning_tokens"),
            cost=opt_num("cost"),
            latency=opt_num("latency") or 0.0,
            created=opt_num("created") or 0.0,
            profile=data["profile"] if isinstance(data.get("profile"), str) else None,
            cached_input_tokens=opt_int("cached_input_tokens"),
        )


def default_cache_dir() -> Path:
    """``$PRB_CACHE_DIR/judge`` if set, else the platform's user cache dir ``prb/judge``."""
    from prb_tasks.common.resources import cache_root

    return cache_root() / "judge"


def open_store(directory: Path) -> diskcache.Cache:
    """A diskcache ``Cache`` on ``directory`` that only ever holds JSON text.

    Raises:
        CacheStoreError: the folder cannot be used (one line: damaged, full disk, not writable).
    """
    with storage_errors(directory):
        return new_json_store(directory, keep_all=True)


class JudgeCache:
    """Answers by request key, with a read/write policy.

    Args:
        directory: cache folder (created if missing).
        mode: see :class:`prb_tasks.judge.options.JudgeSettings` ``cache``.
    """

    def __init__(self, directory: Path, mode: CacheMode = "on") -> None:
        self.directory = directory
        self.mode = mode
        self._refused: set[str] = set()
        self._store: diskcache.Cache | None = open_store(directory) if mode != "off" else None

    @property
    def refused(self) -> int:
        """Distinct keys whose stored entry was not one of our JSON answers."""
        return len(self._refused)

    @property
    def readable(self) -> bool:
        """Whether stored answers are used."""
        return self.mode in ("on", "read")

    @property
    def writable(self) -> bool:
        """Whether new answers are stored."""
        return self.mode in ("on", "write", "refresh")

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer, or None if missing, unreadable, or reads are off."""
        if self._store is None or not self.readable:
            return None
        try:
            with storage_errors(self.directory):
                raw = self._store.get(key, retry=True)
            if raw is None:
                return None
            if not isinstance(raw, str):
                raise UnsafeCacheEntry("cache entry is not text")
            return CachedAnswer.from_json(raw)
        except UnsafeCacheEntry:
            self._refused.add(key)
            return None

    def put(self, key: str, answer: CachedAnswer) -> None:
        """Store an answer now (durable when this returns).

        Raises:
            CacheDiskFull: the disk is full (the answer is not stored).
            CacheStoreError: the cache cannot be written for another reason.
        """
        if self._store is None or not self.writable:
            return
        with storage_errors(self.directory):
            if self.mode == "write" and self._exists(key):
                return
            self._store.set(key, answer.to_json(), retry=True)

    def _exists(self, key: str) -> bool:
        assert self._store is not None
        try:
            return key in self._store
        except UnsafeCacheEntry:
            return True

    def release_thread(self) -> None:
        """Close this thread's SQLite connection (diskcache keeps one per thread)."""
        if self._store is not None:
            self._store.close()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


# --------------------------------------------------------------------------- maintenance


@dataclass
class CacheInfo:
    """What ``prb cache info`` reports."""

    directory: str
    entries: int
    bytes_on_disk: int
    unreadable: int
    oldest: float | None
    newest: float | None
    by_model: dict[str, dict[str, Any]]


def _rows(directory: Path) -> list[tuple[int, Any, int, float, int, Any, Any]]:
    db = directory / "cache.db"
    if not db.is_file():
        return []
    # Read-only scan of diskcache's table, so entries are inspected without ever
    # being unpickled (and without taking a write lock from a running judge).
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)
    try:
        return conn.execute(
            "SELECT rowid, key, raw, store_time, mode, filename, value FROM Cache"
        ).fetchall()
    finally:
        conn.close()


def _answer_of(directory: Path, mode: int, filename: Any, value: Any) -> CachedAnswer | None:
    try:
        text = JsonOnlyDisk(str(directory)).fetch(mode, filename, value, False)
        return CachedAnswer.from_json(text)
    except (UnsafeCacheEntry, OSError):
        return None


def cache_info(directory: Path) -> CacheInfo:
    """Summarize a cache folder without modifying it."""
    rows = _rows(directory)
    by_model: dict[str, dict[str, Any]] = {}
    unreadable = 0
    times: list[float] = []
    for _rowid, key, raw, store_time, mode, filename, value in rows:
        answer = _answer_of(directory, mode, filename, value) if raw and isinstance(key, str) else None
        if answer is None:
            unreadable += 1
            continue
        times.append(float(store_time))
        slot = by_model.setdefault(answer.model, {"entries": 0, "cost": 0.0, "unpriced": 0, "input_tokens": 0,
                                                  "cached_input_tokens": 0})
        slot["entries"] += 1
        slot["input_tokens"] += answer.input_tokens or 0
        slot["cached_input_tokens"] += answer.cached_input_tokens or 0
        if answer.cost is None:
            slot["unpriced"] += 1
        else:
            slot["cost"] += answer.cost
    size = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) if directory.is_dir() else 0
    return CacheInfo(
        directory=str(directory),
        entries=len(rows),
        bytes_on_disk=size,
        unreadable=unreadable,
        oldest=min(times) if times else None,
        newest=max(times) if times else None,
        by_model=by_model,
    )


def clear_cache(directory: Path, older_than: float | None = None) -> int:
    """Delete entries; return how many.

    Args:
        directory: cache folder.
        older_than: only entries stored more than this many seconds ago (None: all,
            including unreadable ones).
    """
    if not (directory / "cache.db").is_file():
        return 0
    store = open_store(directory)
    try:
        if older_than is None:
            return int(store.clear(retry=True))
        cutoff = time.time() - older_than
        removed = 0
        for _rowid, key, raw, store_time, _mode, _filename, _value in _rows(directory):
            if raw and isinstance(key, str) and float(store_time) < cutoff:
                removed += int(store.delete(key, retry=True))
        return removed
    finally:
        store.close()


_UNITS: dict[str, float] = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """Seconds in an age such as ``30d``, ``12h``, ``90m``, ``2w`` (plain number: days)."""
    text = text.strip().lower()
    unit: Literal["s", "m", "h", "d", "w"] | str = text[-1:] if text[-1:] in _UNITS else "d"
    number = text[:-1] if text[-1:] in _UNITS else text
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"cannot read age '{text}'; use e.g. 30d, 12h, 90m or 2w") from None
    if value < 0 or not math.isfinite(value):
        raise ValueError(f"age must be a positive duration, got '{text}'")
    return value * _UNITS[unit]

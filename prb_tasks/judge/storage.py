"""What a failing cache store means, said in one line: a full disk, a damaged file, or
a folder that cannot be used.

The judge's cache and claims are SQLite files (through diskcache). SQLite reports a
full disk as ``OperationalError: database or disk is full`` and a file that is not (or
no longer) a database as ``DatabaseError``; large values go to plain files, where a full
disk is an ``OSError`` (``ENOSPC``). :func:`storage_errors` turns each into an error
naming the folder and what to do, instead of a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from prb_tasks.judge.errors import JudgeError

_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class CacheStoreError(JudgeError):
    """A cache folder that cannot be used (damaged, not writable): one line, exit status 2.

    Args:
        who: the program named at the start of the line.
        problem: what is wrong, naming the folder or file.
        advice: what to do about it.
    """

    def __init__(self, who: str, problem: str, advice: str) -> None:
        super().__init__(f"{who}: {problem}; {advice}")
        self.problem = problem
        self.advice = advice


class CacheDiskFull(CacheStoreError):
    """The disk holding a cache folder is full: what could not be stored is kept in memory
    by the caller where it can, and the run stops sending."""


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full."""
    if isinstance(exc, sqlite3.OperationalError):
        return "full" in str(exc).lower()
    return isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS


def store_error(exc: BaseException, directory: Path, who: str = "prb-judge") -> CacheStoreError | None:
    """The one-line error for a failure of the store in ``directory`` (None: not a storage failure).

    Args:
        exc: what SQLite or the file system raised.
        directory: the store's folder (``cache.db`` lives in it).
        who: the program named at the start of the line.
    """
    if not isinstance(exc, (sqlite3.Error, OSError)):
        return None
    reason = _reason(exc)
    if is_disk_full(exc):
        return CacheDiskFull(who, f"the disk holding the cache {directory} is full ({reason})",
                             "free space there or pass cache_dir= on another disk, then re-run the same "
                             "command to resume")
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return CacheStoreError(who, f"the cache file {directory / 'cache.db'} is damaged ({reason})",
                               f"move the folder aside (mv '{directory}' '{directory}.damaged') and re-run, "
                               "which starts a new cache (answers in the damaged one are asked again), or "
                               "pass cache_dir= to use another folder")
    return CacheStoreError(who, f"cannot use the cache in {directory} ({reason})",
                           "check that the folder can be written, or pass cache_dir= to use another folder")


@contextlib.contextmanager
def storage_errors(directory: Path) -> Iterator[None]:
    """Raise :func:`store_error`'s one-line error for storage failures inside the block.

    Args:
        directory: the folder of the store being used.
    """
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        raise store_error(exc, directory) or exc from None

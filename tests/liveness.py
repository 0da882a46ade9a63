"""Counting what a streaming reader keeps alive: the objects of one test, at each user it validates.

Validated users are followed by weak references to what the reader's validation returns: a scan of
every object in the process (``gc.get_objects``) took a second or more in a test worker late in the
suite, where earlier tests' modules and objects are alive, and these tests count at every user.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import pytest


def track_records(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], int]:
    """Follow every user the custom reader validates from now on (``UserRecord``, held weakly).

    Returns a function of a user-id prefix: how many of those users are alive now whose id starts
    with it (other tests' users in the same worker do not count).
    """
    from prb_tasks.data.custom import reader

    made: list[weakref.ref] = []
    validate = reader.UserRecord.model_validate

    def tracking(item: dict):
        record = validate(item)
        made.append(weakref.ref(record))
        return record

    monkeypatch.setattr(reader.UserRecord, "model_validate", tracking)

    def alive(prefix: str) -> int:
        return sum(1 for ref in made if (record := ref()) is not None and str(record.user_id).startswith(prefix))

    return alive


def raw_users_alive(prefix: str) -> int:
    """Raw user objects (plain dicts from the JSON) alive whose ``user_id`` starts with ``prefix``.

    A dict cannot be held weakly, so this scans every object: call it sparingly (``every`` of
    :func:`count_at_each_validation`). ``type(o) is dict``: a dict subclass alive in the worker
    (dill's dispatch table) may not answer ``.get``.
    """
    return sum(type(o) is dict and str(o.get("user_id")).startswith(prefix) for o in gc.get_objects())


def count_at_each_validation(monkeypatch: pytest.MonkeyPatch, count: Callable[[], int], every: int = 1) -> list[int]:
    """Make the custom reader call ``count`` before it validates a user; returns the list it fills.

    Args:
        monkeypatch: the test's.
        count: what to count.
        every: count before the 1st validation and every ``every``-th after it (1: each one).
    """
    from prb_tasks.data.custom import reader

    seen: list[int] = []
    calls = [0]
    validate = reader.UserRecord.model_validate

    def counting(item: dict):
        if calls[0] % every == 0:
            seen.append(count())
        calls[0] += 1
        return validate(item)

    monkeypatch.setattr(reader.UserRecord, "model_validate", counting)
    return seen

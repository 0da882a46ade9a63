"""Counting what a streaming reader keeps alive: the objects of one test, at each user it validates."""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest


def records_alive(prefix: str) -> int:
    """Validated users (``UserRecord``) alive in the process whose id starts with ``prefix``
    (other tests' users in the same worker do not count)."""
    from prb_tasks.data.custom.schema import UserRecord

    return sum(isinstance(o, UserRecord) and str(o.user_id).startswith(prefix) for o in gc.get_objects())


def raw_users_alive(prefix: str) -> int:
    """Raw user objects (plain dicts from the JSON) alive whose ``user_id`` starts with ``prefix``.

    ``type(o) is dict``: a dict subclass alive in the worker (dill's dispatch table) may not answer ``.get``.
    """
    return sum(type(o) is dict and str(o.get("user_id")).startswith(prefix) for o in gc.get_objects())


def count_at_each_validation(monkeypatch: pytest.MonkeyPatch, count: Callable[[], int]) -> list[int]:
    """Make the custom reader call ``count`` before it validates each user; returns the list it fills."""
    from prb_tasks.data.custom import reader

    seen: list[int] = []
    validate = reader.UserRecord.model_validate

    def counting(item: dict):
        seen.append(count())
        return validate(item)

    monkeypatch.setattr(reader.UserRecord, "model_validate", counting)
    return seen

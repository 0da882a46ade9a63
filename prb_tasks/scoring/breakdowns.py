"""Accuracy per user and per value tag, for data that knows its users.

Each document's outcome is emitted as ``(key, correct)``; the aggregations below
average within each user (or tag) first and then over users (or tags), so a user
with many items counts as much as a user with few. Both orders of a pair count as
two judgments of that user, as in ``acc``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Hashable

from prb_tasks.scoring.metrics import process_judge_both, process_scalar

_NAN = float("nan")

def group_means(items: Iterable[tuple[Hashable, float]]) -> dict[Hashable, float]:
    """Mean value per key.

    Args:
        items: ``(key, value)`` pairs, e.g. ``(user_id, correct)``.
    """
    sums: dict[Hashable, float] = defaultdict(float)
    counts: dict[Hashable, int] = defaultdict(int)
    for key, value in items:
        sums[key] += float(value)
        counts[key] += 1
    return {key: sums[key] / counts[key] for key in sums}


def mean_over_users(items: Iterable[tuple[str, float]]) -> float:
    """Accuracy of each user, averaged over users."""
    means = group_means(items)
    return sum(means.values()) / len(means) if means else _NAN


def tag_items(items: Iterable[tuple[Sequence[str], float]]) -> list[tuple[str, float]]:
    """One ``(tag, value)`` per tag of each item (an item with two tags counts in both)."""
    return [(tag, value) for tags, value in items for tag in tags]


def mean_over_tags(items: Iterable[tuple[Sequence[str], float]]) -> float:
    """Accuracy within each tag, averaged over tags."""
    means = group_means(tag_items(items))
    return sum(means.values()) / len(means) if means else _NAN


def _with_user(out: dict[str, Any], doc: dict[str, Any], tags: bool) -> dict[str, Any]:
    out["acc_user"] = (doc["user_id"], out["acc"])
    if tags:
        out["acc_tag"] = (tuple(doc.get("tags") or ()), out["acc"])
    return out


def process_judge_both_users(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """``process_judge_both`` plus ``acc_user``."""
    return _with_user(process_judge_both(doc, results), doc, tags=False)


def process_judge_both_users_tags(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """``process_judge_both`` plus ``acc_user`` and ``acc_tag``."""
    return _with_user(process_judge_both(doc, results), doc, tags=True)


def process_scalar_users(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """``process_scalar`` plus ``acc_user``."""
    return _with_user(process_scalar(doc, results), doc, tags=False)


def process_scalar_users_tags(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """``process_scalar`` plus ``acc_user`` and ``acc_tag``."""
    return _with_user(process_scalar(doc, results), doc, tags=True)

"""Process-wide lookup of full user profiles by document key.

Harness documents must stay small (they are copied into every sample log line), so a
scorer that needs a user's whole profile (the ``bm25`` and ``embedding`` baselines)
finds it here by the document's ``profile_key``; the loader fills it, either with the
texts themselves or with a function that reads them when first asked for (so a run
that never asks never decodes a profile).
"""

from __future__ import annotations

from collections.abc import Callable

_PROFILES: dict[str, tuple[str, ...] | Callable[[], tuple[str, ...]]] = {}


def remember(key: str, posts: tuple[str, ...] | Callable[[], tuple[str, ...]]) -> None:
    """Keep the post texts of the profile behind ``key``, or a function returning them
    (called on each lookup, so the texts are not held in memory in between)."""
    _PROFILES[key] = posts


def lookup(key: str) -> tuple[str, ...]:
    """The post texts stored for ``key``; a clear error if the loader never saw it."""
    try:
        posts = _PROFILES[key]
    except KeyError:
        raise KeyError(
            f"prb: no profile loaded for document '{key}'; profile-based scorers only work "
            "on prb tasks loaded in the same process"
        ) from None
    return posts() if callable(posts) else posts

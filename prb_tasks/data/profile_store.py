"""Process-wide lookup of full user profiles by document key.

Harness documents must stay small (they are copied into every sample log line), so a
scorer that needs a user's whole profile (the ``bm25`` and ``embedding`` baselines)
finds it here by the document's ``profile_key``; the loader fills it.
"""

from __future__ import annotations

_PROFILES: dict[str, tuple[str, ...]] = {}


def remember(key: str, posts: tuple[str, ...]) -> None:
    """Keep the post texts of the profile behind ``key``."""
    _PROFILES[key] = posts


def lookup(key: str) -> tuple[str, ...]:
    """The post texts stored for ``key``; a clear error if the loader never saw it."""
    try:
        return _PROFILES[key]
    except KeyError:
        raise KeyError(
            f"prb: no profile loaded for document '{key}'; profile-based scorers only work "
            "on prb tasks loaded in the same process"
        ) from None

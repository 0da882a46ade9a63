"""A disk cache of reward scores, JSON only.

Scores are expensive (a 70B RM behind a cluster endpoint) and deterministic for a
given model and input, so they are kept across runs: a re-run after a failure
resumes, and other task variants reuse whatever inputs they share.

Values are JSON text only, through :class:`~prb_tasks.common.jsonstore.JsonOnlyDisk`, which
never unpickles an entry someone else may have written.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from prb_tasks.common.jsonstore import open_json_cache, read_json

# Bump when the meaning of a stored score changes (key layout, formatting rules).
KEY_VERSION = 1


@dataclass(frozen=True)
class ScorerIdentity:
    """Everything besides the input that determines a score.

    Attributes:
        kind: scorer family (``hf``, ``served``, ``embedding``).
        model: hub id, resolved local folder, or endpoint URL and path.
        revision: commit hash, folder fingerprint, or package version.
        dtype: compute precision (empty when not applicable).
        head: how the head output becomes one reward.
        max_length: token limit applied before scoring (None when not applicable).
        extra: other settings that change scores (e.g. truncation side).
    """

    kind: str
    model: str
    revision: str = ""
    dtype: str = ""
    head: str = ""
    max_length: int | None = None
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)


def score_key(identity: ScorerIdentity, formatted_input: str) -> str:
    """Cache key of one score: a hash of the identity and the exact formatted input."""
    payload = json.dumps(
        {"v": KEY_VERSION, **asdict(identity), "input": formatted_input},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return "rm:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ScoreCache:
    """Reward scores on disk, keyed by :func:`score_key`.

    Args:
        directory: cache folder (created if missing).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache = open_json_cache(directory)
        self.refused = 0

    def get(self, key: str) -> float | None:
        """The stored score, or None if absent or not a clean JSON number."""
        value, refused = read_json(self._cache, key)
        if refused:
            self.refused += 1
            return None
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.refused += 1
            return None
        return float(value)

    def get_many(self, keys: Sequence[str]) -> list[float | None]:
        """:meth:`get` for each key, in order."""
        return [self.get(k) for k in keys]

    def put(self, key: str, score: float) -> None:
        """Store a finite score (NaN or infinity is never cached)."""
        if math.isfinite(score):
            self._cache.set(key, json.dumps(float(score)))

    def put_many(self, pairs: Iterable[tuple[str, float]]) -> None:
        """Store several scores in one transaction."""
        with self._cache.transact():
            for key, score in pairs:
                self.put(key, score)

    def __len__(self) -> int:
        return len(self._cache)

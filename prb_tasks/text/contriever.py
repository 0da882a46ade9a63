"""The benchmark authors' post retriever: a Hugging Face encoder, mean pooling, dot product.

Their ``retrieve/rank_dataset.py`` ranks every post of a profile with
``facebook/contriever-msmarco``: the tokenizer pads and truncates each batch, the
model's last hidden states are averaged over the attention mask (no normalization), and
posts are ordered by the dot product of their vector with the question's. This module
is that encoder for ``retriever=contriever`` (:mod:`prb_tasks.prompts.retrieval`); the
ranking itself is :func:`prb_tasks.prompts.dense.rank_dense`, shared with the
all-MiniLM-L6-v2 retriever.

Differences that cannot change a ranking: we embed in our own batch sizes (padding is
masked out of the mean) and cut inputs at the model's position limit (their call cuts at
the tokenizer's configured length; an input longer than the position limit would not run
at all). The model is run in float32, as their script loads it.

The model is any checkpoint of the same architecture: the hub name (from the local
Hugging Face cache when offline) or a local folder (``--metadata retriever_model``).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.common.hub_reach import hub_model_access
from prb_tasks.common.plain_logs import plain_transformers_logs
from prb_tasks.text.encoder import EncoderStats, EncoderUnavailable, precision

DEFAULT_MODEL = "facebook/contriever-msmarco"
#: Texts per forward pass; their script embeds posts 16 at a time.
DEFAULT_BATCH_SIZE = 16
_WEIGHT_SUFFIXES = (".json", ".txt", ".safetensors", ".bin", ".model")


_FIX = ("; on a connected machine run `hf download {model}` once (it is then read from the local "
        "cache), or add \"retriever_model\": \"<a local folder with the model>\" to --metadata")


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~")) or model in (".", "..")


def _unavailable(model: str, exc: BaseException) -> EncoderUnavailable:
    if _looks_like_path(model) and not Path(model).expanduser().is_dir():
        return EncoderUnavailable(f"prb: retriever_model '{model}' is not a folder; give a local folder with the "
                                  f"model (config.json, weights, tokenizer) or a hub name such as {DEFAULT_MODEL}")
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    hub = model if not _looks_like_path(model) else DEFAULT_MODEL
    return EncoderUnavailable(f"prb: cannot load the retriever model '{model}' ({reason[:200]})"
                              + _FIX.format(model=hub))


def _hub_options(model: str) -> dict[str, bool]:
    """``from_pretrained`` options for a hub name (:func:`hub_model_access`), or the one-line error."""
    options, problem = hub_model_access(model)
    if problem:
        raise EncoderUnavailable(f"prb: cannot load the retriever model '{model}': {problem}"
                                 + _FIX.format(model=model))
    return options


@lru_cache(maxsize=16)
def _folder_digest(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> str:
    """Content hash of a local model folder (``stamp``: names, sizes, mtimes: recomputed when they change)."""
    digest = hashlib.sha256()
    for name, _, _ in stamp:
        digest.update(name.encode("utf-8"))
        with open(Path(folder) / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def model_identity(model: str = DEFAULT_MODEL) -> str:
    """What determines this retriever's vectors, for cache keys, without loading the weights:
    the model's name and revision (the hub snapshot's commit, or a hash of a local folder's files).

    Args:
        model: hub name or local folder.
    """
    folder = Path(model).expanduser()
    if folder.is_dir():
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
        if not files:
            raise _unavailable(model, FileNotFoundError("no model files in this folder"))
        stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
        revision = "sha:" + _folder_digest(str(folder.resolve()), stamp)
    else:
        options = {} if _looks_like_path(model) else _hub_options(model)
        try:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(model, **options)
        except ImportError as exc:
            raise EncoderUnavailable(f"prb: retriever=contriever needs transformers and torch; missing: {exc.name}") \
                from None
        except (OSError, ValueError) as exc:
            raise _unavailable(model, exc) from None
        revision = str(getattr(config, "_commit_hash", None) or "unknown")
    return f"{model}|rev={revision}|mean|dot"


class MeanPoolEncoder:
    """A Hugging Face encoder whose text vector is the mask-weighted mean of its last hidden states.

    Args:
        model: hub name (``facebook/contriever-msmarco``) or local folder.
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
        batch_size: texts per forward pass.
    """

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "auto",
                 batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        try:
            import torch  # noqa: F401
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise EncoderUnavailable(f"prb: retriever=contriever needs transformers and torch; missing: {exc.name}") \
                from None
        from prb_tasks.common.devices import resolve_device

        try:
            self.device = resolve_device(device)
        except PRBError:
            raise EncoderUnavailable(f"prb: the retriever model cannot run on device '{device}' here (not "
                                     "available); use auto or cpu") from None
        local = Path(model).expanduser().is_dir()
        path = str(Path(model).expanduser()) if local else model
        options = {} if local or _looks_like_path(model) else _hub_options(model)
        plain_transformers_logs()  # no cursor-moving bars in a log file
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path, **options)
            self.model = AutoModel.from_pretrained(path, **options).to(self.device)
        except (OSError, ValueError) as exc:
            raise _unavailable(model, exc) from None
        self.model.eval()
        self.name = model
        self.batch_size = max(int(batch_size), 1)
        limit = getattr(self.model.config, "max_position_embeddings", None) or 512
        self.max_length = int(min(self.tokenizer.model_max_length or limit, limit))
        self.stats = EncoderStats()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], *, normalize: bool = False, progress: bool = False,
               dtype: str = "float32") -> Any:
        """Mean-pooled vectors of ``texts`` as a float32 array, one row per text.

        Args:
            texts: the texts, embedded ``batch_size`` at a time in the given order.
            normalize: scale each vector to unit length (the authors do not).
            progress: unused (the caller shows progress per chunk).
            dtype: precision (``float32``, as the authors; others run under autocast).
        """
        import numpy as np
        import torch

        hidden = int(self.model.config.hidden_size)
        if not texts:
            return np.zeros((0, hidden), dtype=np.float32)
        parts = []
        with self._lock, precision(dtype, self.device):
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start:start + self.batch_size])
                tokens = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length,
                                        return_tensors="pt").to(self.device)
                states = self.model(**tokens).last_hidden_state
                mask = tokens["attention_mask"]
                states = states.masked_fill(~mask[..., None].bool(), 0.0)
                pooled = states.sum(dim=1) / mask.sum(dim=1)[..., None]
                parts.append(pooled.to(torch.float32).cpu().numpy())
            self.stats.calls += 1
            self.stats.texts += len(texts)
        vectors = np.concatenate(parts).astype(np.float32, copy=False)
        if normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


_SHARED: dict[tuple[str, str], MeanPoolEncoder] = {}
_SHARED_LOCK = threading.Lock()


def shared_contriever(model: str = DEFAULT_MODEL, device: str = "auto") -> MeanPoolEncoder:
    """The process-wide encoder for ``model`` on ``device`` (loaded on first use, then reused).

    Args:
        model: hub name or local folder.
        device: as for :class:`MeanPoolEncoder`.
    """
    key = (model, device)
    with _SHARED_LOCK:
        encoder = _SHARED.get(key)
        if encoder is None:
            encoder = _SHARED[key] = MeanPoolEncoder(model, device)
        return encoder

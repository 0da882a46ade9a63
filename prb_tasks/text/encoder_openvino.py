"""all-MiniLM-L6-v2 (Transformer + mean pooling) run by OpenVINO on the CPU (extra ``embed-fast``).

The torch model is converted once to OpenVINO's format, with the mean pooling inside
the graph and dynamic batch and sequence sizes, and kept on disk under
``<prb cache>/openvino`` keyed by the model package's and OpenVINO's versions (the
conversion takes several seconds; loading the stored model a fraction of one). Weights
are stored in float32; the precision is chosen when the model is compiled
(``INFERENCE_PRECISION_HINT``: ``f32``, or ``bf16``, which OpenVINO computes in hardware
on CPUs with AVX512-BF16 or AMX; elsewhere, and under ``PRB_NO_BF16=1``, bfloat16 is
compiled as ``f32``, and :meth:`OpenVINOModel.computes_in` says so).

Batches run several at a time (OpenVINO's throughput mode: two streams of one thread each
on a 2-core CPU), which keeps both cores busy where a single stream leaves part of each
batch (small kernels, pooling, hand-offs) on one core: 60 against 32-51 texts/s in the
same loaded minute here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

# Bump when the exported graph changes (inputs, pooling), so stored conversions are redone.
_FORMAT = 1
PRECISION_HINTS = {"float32": "f32", "bfloat16": "bf16"}


def openvino_version() -> str:
    """The installed OpenVINO's version (raises ImportError without the extra)."""
    import openvino

    return str(openvino.__version__)


def stored_model_path(package_version: str) -> Path:
    """Where the converted model is kept for this model package and OpenVINO version."""
    from prb_tasks.common.resources import cache_root

    version = openvino_version().split("-")[0]
    return cache_root() / "openvino" / f"all-minilm-l6-v2-{package_version}-ov{version}-f{_FORMAT}" / "model.xml"


def _pooled(transformer: Any) -> Any:
    """The Hugging Face BERT model followed by mean pooling over the attention mask."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    return MeanPooled(transformer).eval()


def convert(transformer: Any, path: Path) -> None:
    """Convert ``transformer`` (the Hugging Face model) with mean pooling and store it at ``path``.

    Args:
        transformer: the ``transformers`` BERT model of all-MiniLM-L6-v2, in float32.
        path: the ``model.xml`` to write (its weights go next to it); written whole or not at all.
    """
    import openvino as ov
    import torch

    example = {"input_ids": torch.ones((2, 8), dtype=torch.long),
               "attention_mask": torch.ones((2, 8), dtype=torch.long)}
    dynamic = ov.PartialShape([-1, -1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracing warnings about Python control flow: shapes stay dynamic
        model = ov.convert_model(_pooled(transformer), example_input=example,
                                 input=[("input_ids", dynamic, ov.Type.i64), ("attention_mask", dynamic, ov.Type.i64)])
    from prb_tasks.common.private import private_folder

    private_folder(path.parent.parent)  # every folder under prb's cache root is owner-only
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=path.parent.parent))
    try:
        # float32 weights on disk: the precision is picked at compile time.
        ov.save_model(model, staging / path.name, compress_to_fp16=False)
        try:
            os.replace(staging, path.parent)
        except OSError:  # another process stored it first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class OpenVINOModel:
    """The converted model, compiled once per precision.

    Args:
        path: the stored ``model.xml``.
    """

    def __init__(self, path: Path) -> None:
        import openvino as ov

        self._core = ov.Core()
        self._model = self._core.read_model(str(path))
        self._compiled: dict[str, Any] = {}

    def hint(self, dtype: str) -> str:
        """The precision hint ``dtype`` compiles with: ``bf16`` only where this CPU computes
        bfloat16 (OpenVINO's own capability list) and ``PRB_NO_BF16`` is not set, else ``f32``."""
        from prb_tasks.common.devices import bf16_switched_off

        if dtype == "bfloat16" and (bf16_switched_off()
                                    or "BF16" not in self._core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")):
            return "f32"
        return PRECISION_HINTS[dtype]

    def compiled(self, dtype: str) -> Any:
        """The model compiled for the CPU in ``dtype`` (``float32`` or ``bfloat16``; see :meth:`hint`)."""
        hint = self.hint(dtype)
        if hint not in self._compiled:
            self._compiled[hint] = self._core.compile_model(
                self._model, "CPU", {"INFERENCE_PRECISION_HINT": hint, "PERFORMANCE_HINT": "THROUGHPUT"})
        return self._compiled[hint]

    def computes_in(self, dtype: str) -> str:
        """The precision OpenVINO really computes in when asked for ``dtype``
        (``float32`` or ``bfloat16``), as the compiled model reports it."""
        reported = self.compiled(dtype).get_property("INFERENCE_PRECISION_HINT")
        name = getattr(reported, "get_type_name", lambda: str(reported))()
        return "bfloat16" if name == "bf16" else "float32"

    def run(self, batches: list[dict[str, Any]], dtype: str, on_batch: Any = None) -> list[Any]:
        """The pooled vectors of each batch of token ids, in order.

        Args:
            batches: ``input_ids`` and ``attention_mask`` arrays (int64, batch x length).
            dtype: ``float32`` or ``bfloat16``.
            on_batch: called with each finished batch's size (a progress bar's update).
        """
        import numpy as np

        compiled = self.compiled(dtype)
        # One request per stream, fed in turn from this thread. No Python callback runs on
        # OpenVINO's threads: with AsyncInferQueue's callbacks, freeing the compiled model
        # later could deadlock (a stream thread waiting for the GIL the freeing thread held).
        count = max(1, int(compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
        requests = [compiled.create_infer_request() for _ in range(min(count, len(batches)))]
        pending: list[int | None] = [None] * len(requests)
        out: list[Any] = [None] * len(batches)

        def collect(slot: int) -> None:
            index = pending[slot]
            if index is None:
                return
            requests[slot].wait()
            out[index] = np.array(requests[slot].get_output_tensor(0).data, dtype=np.float32)  # a copy
            pending[slot] = None
            if on_batch is not None:
                on_batch(len(out[index]))

        for index, batch in enumerate(batches):
            slot = index % len(requests)
            collect(slot)
            requests[slot].start_async({"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]},
                                       share_inputs=False)
            pending[slot] = index
        for slot in range(len(requests)):
            collect(slot)
        return out

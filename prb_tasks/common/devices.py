"""Pick the torch device and dtype for local models (torch is imported lazily).

Shared by the reward models, the text encoders and dense retrieval; a device that is not
there is a one-line :class:`~prb_tasks.common.errors.PRBError`.
"""

from __future__ import annotations

from typing import Any

from prb_tasks.common.errors import PRBError


def resolve_device(requested: str, from_harness: bool = False) -> str:
    """A concrete torch device name.

    Args:
        requested: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
        from_harness: the value came from lm-eval's ``--device``, whose default is
            ``cuda:0`` even on machines without a GPU; an unavailable device then
            falls back to ``auto`` with a warning instead of failing.
    """
    import torch

    if requested == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        if from_harness:
            # lm-eval's --device defaults to cuda:0 on every machine: not an error.
            return resolve_device("auto")
        raise PRBError(f"prb-rm: device={requested} was requested but CUDA is not available")
    if requested == "mps" and not torch.backends.mps.is_available():
        raise PRBError("prb-rm: device=mps was requested but MPS is not available")
    return requested


def resolve_dtype(requested: str, device: str) -> Any:
    """The torch dtype for ``requested`` on ``device``.

    ``auto`` is float32 on CPU (half precision is slow and inexact there), bfloat16 on
    CUDA with bf16 support, float16 otherwise.
    """
    import torch

    if requested != "auto":
        return getattr(torch, requested)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device == "mps":
        return torch.float16
    return torch.float32


NO_BF16_ENV = "PRB_NO_BF16"


def bf16_switched_off() -> bool:
    """True when ``PRB_NO_BF16=1``: behave as on a CPU without bfloat16 instructions.

    ``dtype=auto`` then resolves to float32 and the openvino backend compiles in float32
    even when asked for bfloat16 (what OpenVINO does on such a CPU), so the suite can be
    run as on one (docs/development.md, "CPU features").
    """
    import os

    return os.environ.get(NO_BF16_ENV, "").strip() not in ("", "0")

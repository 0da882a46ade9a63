"""Turn a classifier head's output (one value per class) into one reward.

Shared by the local HF scorer and the served one, so a model scores the same
whichever way it is run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from prb_tasks.rm.errors import RMError

HeadMode = Literal["logit", "last_softmax"]


def resolve_head(mode: str, num_labels: int) -> HeadMode:
    """The head mode to use for a model with ``num_labels`` outputs.

    Args:
        mode: ``auto``, ``logit`` or ``last_softmax``.
        num_labels: classes of the model's head.
    """
    if mode == "auto":
        return "logit" if num_labels == 1 else "last_softmax"
    if mode == "last_softmax" and num_labels == 1:
        raise RMError("prb-rm: head=last_softmax needs a multi-class head, but this model has a single logit; "
                      "use head=logit")
    if mode not in ("logit", "last_softmax"):
        raise RMError(f"prb-rm: unknown head mode '{mode}'; expected auto, logit or last_softmax")
    return mode  # type: ignore[return-value]


def reward(values: Sequence[float], mode: HeadMode) -> float:
    """One reward from the head's raw outputs (logits).

    Args:
        values: raw outputs, one per class.
        mode: ``logit`` takes the last (for one label: the only) value;
            ``last_softmax`` the softmax probability of the last class.
    """
    if not values:
        raise RMError("prb-rm: the reward model returned no values")
    if mode == "logit":
        return float(values[-1])
    top = max(values)
    # Subtracting the maximum keeps exp() from overflowing on large logits.
    exps = [math.exp(v - top) for v in values]
    return exps[-1] / sum(exps)

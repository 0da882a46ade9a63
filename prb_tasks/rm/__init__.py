"""Scalar reward models and baselines behind the ``prb-rm`` lm-eval model."""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.rm.inputs import RMInput, from_request
    from prb_tasks.rm.model import RewardModelLM
    from prb_tasks.rm.scorers.base import Report, Scorer

__all__ = ["from_request", "Report", "RewardModelLM", "RMInput", "Scorer"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.rm.inputs": ("RMInput", "from_request"),
    "prb_tasks.rm.model": ("RewardModelLM",),
    "prb_tasks.rm.scorers.base": ("Report", "Scorer"),
})

"""Scorers: each maps a batch of :class:`~prb_tasks.rm.inputs.RMInput` to rewards."""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.rm.scorers.base import Report, Scorer

__all__ = ["Report", "Scorer"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.rm.scorers.base": ("Report", "Scorer"),
})

"""RM-Bench (THU-KEG/RM-Bench): rows read from a local copy of ``total_dataset.json`` or the hub."""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.data.rmbench.schema import Row

__all__ = ["Row"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.data.rmbench.schema": ("Row",),
})

"""RewardBench 2 (allenai/reward-bench-2): rows read from a local copy in the HF layout or the hub."""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.data.rewardbench2.schema import Row

__all__ = ["Row"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.data.rewardbench2.schema": ("Row",),
})

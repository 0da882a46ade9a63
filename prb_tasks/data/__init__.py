"""Loading and validating Personalized RewardBench rows."""

from prb_tasks.data.schema import PRBRow, ProfilePost, RubricAspect
from prb_tasks.data.subsets import SUBSETS, Subset, subset_by_name

__all__ = ["PRBRow", "ProfilePost", "RubricAspect", "SUBSETS", "Subset", "subset_by_name"]

"""Personalized RewardBench rows: schema, subsets, files in the HF layout, sources."""

from prb_tasks.data.personalized_rb.schema import PRBRow, ProfilePost, RubricAspect
from prb_tasks.data.personalized_rb.subsets import SUBSETS, Subset, subset_by_name

__all__ = ["PRBRow", "ProfilePost", "RubricAspect", "SUBSETS", "Subset", "subset_by_name"]

"""Functions the RewardBench 2 task YAMLs reference; the code lives in the installed
``prb_tasks`` package so every task shares one copy of its state."""

from prb_tasks.documents.rewardbench2 import load_dataset  # noqa: F401
from prb_tasks.prompts.prompt_store import doc_prompt  # noqa: F401
from prb_tasks.scoring.rewardbench2 import (  # noqa: F401
    process_best_of_n,
    process_ties,
    ties_correctness_preferred,
    ties_correctness_preferred_hard,
    ties_margin_score,
    ties_official,
    ties_ref_acc,
    ties_tied_acc,
)
from prb_tasks.scoring.rewardbench2_ratings import (  # noqa: F401
    judge_best_of_n,
    judge_ties,
    judge_top1,
    process_rating,
)

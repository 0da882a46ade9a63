"""Functions the bring-your-own task YAMLs reference; the code lives in the installed
``prb_tasks`` package so every task shares one copy of its state."""

from prb_tasks.docs.custom import load_dataset  # noqa: F401
from prb_tasks.scoring.breakdowns import (  # noqa: F401
    mean_over_tags,
    mean_over_users,
    process_judge_both_users_tags,
    process_scalar_users_tags,
)
from prb_tasks.scoring.metrics import pair_all_correct, pair_consistency, share_of_a  # noqa: F401

"""Functions the task YAMLs reference; the code lives in the installed ``prb_tasks``
package so every task shares one copy of its state."""

from prb_tasks.scoring.metrics import (  # noqa: F401
    pair_all_correct,
    pair_consistency,
    process_judge_both,
    process_judge_single,
    process_scalar,
    share_of_a,
)
from prb_tasks.docs.personalized_rb import load_dataset  # noqa: F401
from prb_tasks.scoring.plans import plan_precision, plan_recall, process_plan  # noqa: F401

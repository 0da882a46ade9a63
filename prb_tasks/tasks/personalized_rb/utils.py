"""Functions the task YAMLs reference; the code lives in the installed ``prb_tasks``
package so every task shares one copy of its state."""

from prb_tasks.documents.personalized_rb import load_dataset  # noqa: F401
from prb_tasks.prompts.prompt_store import doc_prompt  # noqa: F401
from prb_tasks.replies.plans import plan_precision, plan_recall, process_plan  # noqa: F401
from prb_tasks.scoring.group_weights import install
from prb_tasks.scoring.metrics import (  # noqa: F401
    acc_chosen_in_a,
    acc_chosen_in_b,
    double_game,
    pair_all_correct,
    pair_consistency,
    position_bias,
    process_judge_both,
    process_judge_single,
    process_scalar,
    share_of_a,
)
from prb_tasks.scoring.soft import (  # noqa: F401
    acc_cov20,
    acc_cov40,
    acc_cov60,
    acc_cov80,
    acc_cov100,
    calibration_error,
    soft_accuracy,
    soft_coverage,
)

# Group rows weight subsets by what each metric measured (a subset without a readable
# verdict no longer turns the group's pos_a_rate into NaN); see group_weights.
install()

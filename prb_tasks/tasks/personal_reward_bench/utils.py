"""Functions the PersonalRewardBench task YAMLs reference; the code lives in the installed ``prb_tasks`` package."""

from prb_tasks.documents.personal_reward_bench import load_dataset  # noqa: F401
from prb_tasks.prompts.prompt_store import doc_prompt  # noqa: F401
from prb_tasks.scoring.breakdowns import mean_over_users, process_judge_both_users, process_scalar_users  # noqa: F401
from prb_tasks.scoring.metrics import (  # noqa: F401
    acc_chosen_in_a,
    acc_chosen_in_b,
    double_game,
    pair_all_correct,
    pair_consistency,
    position_bias,
    share_of_a,
)
from prb_tasks.scoring.personal_reward_bench import (  # noqa: F401
    count,
    pgenrm_accuracy,
    process_pgenrm,
    process_synthesizeme,
    synthesizeme_high,
    synthesizeme_low,
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

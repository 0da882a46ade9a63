"""Functions the PersonalLLM task YAMLs reference; the code lives in the installed
``prb_tasks`` package so every task shares one copy of its state."""

from prb_tasks.documents.personalllm import load_dataset  # noqa: F401
from prb_tasks.prompts.prompt_store import doc_prompt  # noqa: F401
from prb_tasks.scoring.bestofn import (  # noqa: F401
    judge_bon_regret_n2,
    judge_bon_regret_n4,
    judge_bon_regret_n8,
    judge_bon_reward_n2,
    judge_bon_reward_n4,
    judge_bon_reward_n8,
    judge_bon_win_popular_n2,
    judge_bon_win_popular_n4,
    judge_bon_win_popular_n8,
    judge_bon_win_random_n2,
    judge_bon_win_random_n4,
    judge_bon_win_random_n8,
    process_bon_judge,
    process_bon_scalar,
)
from prb_tasks.scoring.breakdowns import (  # noqa: F401
    mean_over_users,
    process_judge_both_users,
    process_scalar_users,
)
from prb_tasks.scoring.metrics import (  # noqa: F401
    acc_chosen_in_a,
    acc_chosen_in_b,
    double_game,
    pair_all_correct,
    pair_consistency,
    position_bias,
    share_of_a,
)
from prb_tasks.scoring.personalllm_gen import process_generation  # noqa: F401
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

"""Functions the few-shot task YAMLs reference; the code lives in the installed
``prb_tasks`` package so every task shares one copy of its state."""

from prb_tasks.documents.fewshot import load_dataset  # noqa: F401
from prb_tasks.fewshot.metrics import aukc, macro_high, macro_low, mean_present  # noqa: F401
from prb_tasks.prompts.prompt_store import doc_prompt  # noqa: F401
from prb_tasks.scoring.breakdowns import mean_over_users  # noqa: F401
from prb_tasks.scoring.fewshot import process_fewshot_judge, process_fewshot_method  # noqa: F401
from prb_tasks.scoring.metrics import (  # noqa: F401
    acc_chosen_in_a,
    acc_chosen_in_b,
    double_game,
    pair_all_correct,
    pair_consistency,
    position_bias,
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

"""Functions the RM-Bench task YAMLs reference; the code lives in the installed ``prb_tasks``
package so every task shares one copy of its state."""

from prb_tasks.documents.rmbench import load_dataset  # noqa: F401
from prb_tasks.prompts.prompt_store import doc_prompt  # noqa: F401
from prb_tasks.scoring.group_weights import install
from prb_tasks.scoring.metrics import pair_consistency, share_of_a  # noqa: F401
from prb_tasks.scoring.rmbench import domain_score, easy_acc, hard_acc, normal_acc, process_styles  # noqa: F401
from prb_tasks.scoring.rmbench_judge import (  # noqa: F401
    judge_easy_acc,
    judge_hard_acc,
    judge_normal_acc,
    judge_score,
    process_pair,
)

# Group rows weight consistency and pos_a_rate by what each domain measured (see group_weights).
install()

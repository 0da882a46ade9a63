"""Functions the Best-of-N task YAMLs reference; the code lives in the installed
``prb_tasks`` package so every task shares one copy of its state."""

from prb_tasks.documents.personalized_rb_bon import load_dataset  # noqa: F401
from prb_tasks.prompts.prompt_store import doc_prompt  # noqa: F401
from prb_tasks.scoring.bestofk import (  # noqa: F401
    JUDGE_AGGREGATIONS,
    keep_all,
    nanmean,
    process_bon_judge,
    process_bon_scalar,
    process_candidates,
    process_grade,
)

# One aggregation per judge metric (utils.judge_bon_gold_k4, ...), named in the YAML.
globals().update(JUDGE_AGGREGATIONS)

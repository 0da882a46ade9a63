"""Facts about PersonalLLM, read from the authors' code (namkoong-lab/PersonalLLM).

Their ``data/constants.py`` gives every reward model a mean and standard deviation;
their scripts z-score each raw reward with them and order a user's weight vector by
the *sorted* reward-model keys. ``beaver_7b`` is a cost model (higher = worse), yet
their code uses its z-score unchanged: we do the same by default.
"""

from __future__ import annotations

HF_REPO = "namkoong-lab/PersonalLLM"
HF_SPLIT = "test"
# Read only by the authors' public-script preset, whose histories come from it.
TRAIN_SPLIT = "train"
# The hub layout: <dir>/data/test-00000-of-00001.parquet
DATA_FOLDER = "data"
EXPECTED_TEST_ROWS = 1000

N_RESPONSES = 8

# (mean, standard deviation) of each reward model's raw score, as published.
NORMALISATION: dict[str, tuple[float, float]] = {
    "beaver_7b": (6.233516894340515, 3.012641148973965),
    "gemma_2b": (4.3304170169830325, 2.038611338958803),
    "gemma_7b": (1.6259730467796325, 2.6096741570264976),
    "llama3_sfairx": (1.0637639780044557, 2.953017385451928),
    "mistral_raft": (8.309211883544922, 3.0728436748484533),
    "mistral_ray": (3.0136284782886507, 1.6902981149232585),
    "mistral_weqweasdas": (7.071075622558594, 2.578636650248985),
    "oasst_deberta_v3": (2.8976835689097644, 1.7207868789061331),
    "oasst_pythia_1b": (4.293944010734558, 2.3018268820938133),
    "oasst_pythia_7b": (4.706351243972779, 1.3659142113789966),
}

# Weight-vector order: the authors sort the reward-model names.
REWARD_MODELS: tuple[str, ...] = tuple(sorted(NORMALISATION))

COST_MODEL = "beaver_7b"

# The checkpoint of each reward model (``model_name`` in the authors' constants).
# mistral_raft's tokenizer is another repository there (mistralai/Mistral-7B-Instruct-v0.2),
# and beaver_7b needs PKU's own model class: see docs/personalllm.md.
HUB_IDS: dict[str, str] = {
    "beaver_7b": "PKU-Alignment/beaver-7b-v1.0-cost",
    "gemma_2b": "weqweasdas/RM-Gemma-2B",
    "gemma_7b": "weqweasdas/RM-Gemma-7B",
    "llama3_sfairx": "sfairXC/FsfairX-LLaMA3-RM-v0.1",
    "mistral_raft": "hendrydong/Mistral-RM-for-RAFT-GSHF-v0",
    "mistral_ray": "Ray2333/reward-model-Mistral-7B-instruct-Unified-Feedback",
    "mistral_weqweasdas": "weqweasdas/RM-Mistral-7B",
    "oasst_deberta_v3": "OpenAssistant/reward-model-deberta-v3-large-v2",
    "oasst_pythia_1b": "OpenAssistant/oasst-rm-2.1-pythia-1.4b-epoch-2.5",
    "oasst_pythia_7b": "OpenAssistant/oasst-rm-2-pythia-6.9b-epoch-1",
}

# prb's defaults; 0.01 is the public generation script's alpha (the paper uses 0.05,
# see presets.py).
DEFAULT_ALPHA = 0.01
DEFAULT_USERS = 1000
DEFAULT_SEED = 42


def score_column(response: int, model: str) -> str:
    """Column holding ``model``'s raw reward of response ``response`` (1-based)."""
    return f"response_{response}_{model}"

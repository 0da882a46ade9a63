"""The authors' own settings for simulated users, as their code builds them (opt-in).

prb's default items are our own design (a per-user walk without repeated prompts over
all eight answers, near-ties dropped). A preset instead builds each user's history the
way the authors' interaction-database script does, read in their code:

- ``public_script``: namkoong-lab/PersonalLLM @2b32f2a, ``data/gen_pref_interaction_database.py``
  (alpha 0.01, 25-49 earlier choices, prompts from the *train* split);
- ``paper``: namkoong-lab/Private_PersonalLLM @0fd9a3c (the repository of the paper's
  source), the same script with its settings there (alpha 0.05, 3-5 earlier choices,
  prompts from the *test* split, which is what that script loads). The name is the
  repository's, not the paper's text: the experiments the paper describes build histories
  otherwise (5 prompts per user, similar or random, each with the user's best and worst
  of the 8 answers), which no preset reproduces.

Both draw every user's history from one random stream seeded once (``np.random.seed``),
user after user: the history's length, then per entry a prompt (with replacement) and
two distinct answers out of answers 1-7 (``np.arange(1, 8)``; answer 8 is never drawn).
The user chose the first answer (``a``) if its reward is strictly higher, else the
second (``b``), so an exact tie is labelled ``b`` and near-ties are kept.

The authors' code that attaches a test prompt to each user for evaluation is not public;
prb draws each user's item(s) on the test split from a generator seeded with
``(user_seed, user)``, with the same pair and label rules (see :func:`draw_items`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from prb_tasks.data.personalllm.constants import HF_SPLIT, N_RESPONSES, TRAIN_SPLIT


@dataclass(frozen=True)
class Preset:
    """One of the authors' settings.

    Attributes:
        name: the ``--metadata`` value.
        alpha: Dirichlet concentration of the users' weights.
        min_history: fewest earlier choices per user (numpy ``randint``'s low).
        max_history: one more than the most earlier choices (``randint``'s high, exclusive).
        history_split: the split the histories' prompts come from.
        source: where in the authors' code the setting is read.
    """

    name: str
    alpha: float
    min_history: int
    max_history: int
    history_split: str
    source: str


PRESETS: dict[str, Preset] = {
    "public_script": Preset("public_script", 0.01, 25, 50, TRAIN_SPLIT,
                            "namkoong-lab/PersonalLLM@2b32f2a data/gen_pref_interaction_database.py"),
    "paper": Preset("paper", 0.05, 3, 6, HF_SPLIT,
                    "namkoong-lab/Private_PersonalLLM@0fd9a3c PersonalLLM/data/gen_pref_interaction_database.py"),
}

# The authors draw the two answers from np.arange(1, n_responses) with n_responses 8.
AUTHORS_ANSWERS = np.arange(1, N_RESPONSES)


@dataclass(frozen=True)
class Entry:
    """One drawn comparison: a prompt row and two answers (0-based), in drawn order."""

    prompt: int
    first: int
    second: int


def draw_histories(n_users: int, n_prompts: int, preset: Preset, seed: int) -> list[list[Entry]]:
    """Every user's history entries, drawn as the authors' database script draws them.

    Args:
        n_users: users (the stream is drawn user after user, so the first ``n`` users'
            histories do not depend on how many follow).
        n_prompts: rows of the history split (``len(ds)`` in their script).
        preset: lengths come from ``randint(min_history, max_history)``.
        seed: the seed of their single ``np.random.seed`` call.
    """
    # A RandomState seeded once is the global stream np.random.seed(seed) starts.
    stream = np.random.RandomState(seed)
    histories: list[list[Entry]] = []
    for _ in range(n_users):
        length = stream.randint(preset.min_history, high=preset.max_history)
        entries = []
        for _ in range(length):
            prompt = stream.randint(0, high=n_prompts)
            first, second = stream.choice(AUTHORS_ANSWERS, size=2, replace=False)
            entries.append(Entry(int(prompt), int(first) - 1, int(second) - 1))
        histories.append(entries)
    return histories


def draw_items(user: int, n_prompts: int, count: int, seed: int) -> list[Entry]:
    """prb's test item(s) for one user under a preset: prompts with replacement, answers 1-7.

    Args:
        user: the user's index (each user has its own generator, so items do not
            depend on the number of users).
        n_prompts: rows of the test split.
        count: items per user.
        seed: ``user_seed``.
    """
    rng = np.random.default_rng([seed, user])
    out = []
    for _ in range(count):
        prompt = int(rng.integers(n_prompts))
        first, second = rng.choice(AUTHORS_ANSWERS, size=2, replace=False)
        out.append(Entry(prompt, int(first) - 1, int(second) - 1))
    return out

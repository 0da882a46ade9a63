"""Simulated PersonalLLM users and their rewards.

A user is a weight vector over the ten reward models drawn from a symmetric
Dirichlet, exactly as the authors draw it (``scipy.stats.dirichlet.rvs`` with an
integer ``random_state``, which is numpy's legacy ``RandomState(seed).dirichlet``); a
user's reward for a response is the dot product of the weights with the response's
z-scored rewards. The draw is prefix-stable: the first ``n`` users are the same
whatever the total number of users.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalllm.constants import COST_MODEL, NORMALISATION, REWARD_MODELS
from prb_tasks.data.personalllm.schema import PromptRow


def user_name(user: int) -> str:
    """The ``user_id`` of simulated user number ``user``."""
    return f"user{user:04d}"


def sample_weights(n_users: int, alpha: float, seed: int) -> np.ndarray:
    """Weight vectors of ``n_users`` users, shape ``(n_users, 10)``, rows summing to 1.

    Args:
        n_users: how many users.
        alpha: concentration of the symmetric Dirichlet (small = each user follows
            about one reward model; large = everyone near the average).
        seed: the ``random_state`` handed to scipy.
    """
    # scipy.stats.dirichlet.rvs(alpha, size, random_state=seed) is exactly this call
    # (checked in the tests); calling numpy directly spares a 1.5 s scipy import.
    weights = np.random.RandomState(seed).dirichlet(np.full(len(REWARD_MODELS), float(alpha)), size=n_users)
    if np.isnan(weights).any():
        # numpy's gamma draws underflow to 0 for every component at tiny alphas.
        raise DataError(
            f"prb: --metadata 'alpha' {alpha:g} is so small that the Dirichlet draw underflows "
            "for some users; use alpha >= 0.001"
        )
    return weights


def normalised_scores(rows: Sequence[PromptRow], flip_cost: bool = False) -> np.ndarray:
    """Z-scored rewards with the published constants, shape ``(prompts, 8, 10)``.

    Args:
        rows: prompts whose rewards are all present.
        flip_cost: negate the z-score of the cost model ``beaver_7b`` (higher cost =
            lower reward). The authors do not flip it.
    """
    raw = np.asarray([row.scores for row in rows], dtype=np.float64)
    mean = np.asarray([NORMALISATION[m][0] for m in REWARD_MODELS])
    sd = np.asarray([NORMALISATION[m][1] for m in REWARD_MODELS])
    z = (raw - mean) / sd
    if flip_cost:
        z[..., REWARD_MODELS.index(COST_MODEL)] *= -1.0
    return z

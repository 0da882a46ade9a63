"""Turn simulated users and prompts into labelled pairs with a history of earlier choices.

For each user (independently, with a generator seeded by ``(seed, user)``, so a user's
items do not depend on how many users there are) we walk the prompts in a random
order; at each prompt two distinct responses out of eight are drawn, and the user's
weighted reward decides which one they choose. A pair whose two rewards differ by no
more than ``margin`` is a near-tie: nobody could call it, so it is dropped (from
items and histories alike) and the walk goes on. The walk stops once the user has
``k + items_per_user`` clear choices; the last ``items_per_user`` are the items to
predict, and each item's history is the ``k`` choices just before it. Prompts are
never repeated within a user, so an item never appears in its own history.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from prb_tasks.data.personalllm.constants import (
    DEFAULT_ALPHA,
    DEFAULT_SEED,
    DEFAULT_USERS,
    N_RESPONSES,
)
from prb_tasks.data.personalllm.schema import PromptRow
from prb_tasks.data.personalllm.users import normalised_scores, sample_weights

DEFAULT_K = 4
DEFAULT_ITEMS_PER_USER = 1
DEFAULT_MARGIN = 0.1


@dataclass(frozen=True)
class SimulationConfig:
    """How users and their choices are simulated.

    Attributes:
        n_users: simulated users.
        alpha: symmetric Dirichlet concentration of the weight vectors.
        seed: seed of the weight draw and of each user's walk over prompts.
        k: earlier choices shown with each item.
        items_per_user: choices to predict per user.
        margin: pairs whose user rewards differ by no more than this are dropped.
        flip_cost: negate the cost model's z-score (the authors do not).
    """

    n_users: int = DEFAULT_USERS
    alpha: float = DEFAULT_ALPHA
    seed: int = DEFAULT_SEED
    k: int = DEFAULT_K
    items_per_user: int = DEFAULT_ITEMS_PER_USER
    margin: float = DEFAULT_MARGIN
    flip_cost: bool = False


@dataclass(frozen=True)
class Choice:
    """One comparison a user made.

    Attributes:
        prompt: index of the prompt in :attr:`Simulation.rows`.
        first: response index (0-7) shown first.
        second: response index shown second.
        chosen: the one the user prefers (``first`` or ``second``).
        gap: absolute difference of the user's two rewards.
    """

    prompt: int
    first: int
    second: int
    chosen: int
    gap: float

    @property
    def rejected(self) -> int:
        """The response the user did not choose."""
        return self.second if self.chosen == self.first else self.first


@dataclass(frozen=True)
class UserItem:
    """A choice to predict, with the choices the same user made before it.

    Attributes:
        user: index of the user.
        choice: the held-out comparison.
        history: earlier comparisons of the same user, oldest first.
    """

    user: int
    choice: Choice
    history: tuple[Choice, ...]


@dataclass
class Simulation:
    """Everything generated for one configuration.

    Attributes:
        rows: the prompts used (all rewards present), in dataset order.
        config: the configuration.
        weights: users' weight vectors, shape ``(n_users, 10)``.
        scores: z-scored rewards, shape ``(prompts, 8, 10)``.
        items: choices to predict, grouped by user in user order.
        near_ties: comparisons dropped because they were within the margin.
        short_histories: items with fewer than ``k`` earlier choices (too few prompts).
    """

    rows: list[PromptRow]
    config: SimulationConfig
    weights: np.ndarray
    scores: np.ndarray
    items: list[UserItem]
    near_ties: int
    short_histories: int

    def user_rewards(self, user: int, prompt: int) -> np.ndarray:
        """The user's reward of each of the prompt's eight responses."""
        return self.scores[prompt] @ self.weights[user]

    @cached_property
    def population_weights(self) -> np.ndarray:
        """Mean weight vector of the simulated users (the population-average user)."""
        return self.weights.mean(axis=0)

    def population_rewards(self, prompt: int) -> np.ndarray:
        """The population-average user's reward of each of the prompt's responses.

        Rewards are linear in the weights, so this is also the mean reward over users.
        """
        return self.scores[prompt] @ self.population_weights


def _walk(user: int, weights: np.ndarray, scores: np.ndarray, config: SimulationConfig) -> tuple[list[Choice], int]:
    rng = np.random.default_rng([config.seed, user])
    wanted = config.k + config.items_per_user
    choices: list[Choice] = []
    dropped = 0
    for prompt in rng.permutation(scores.shape[0]):
        # An ordered pair of distinct responses, uniformly.
        first = int(rng.integers(N_RESPONSES))
        second = int(rng.integers(N_RESPONSES - 1))
        second += second >= first
        pair = scores[prompt, [first, second]] @ weights
        gap = float(pair[0] - pair[1])
        if abs(gap) <= config.margin:
            dropped += 1
            continue
        choices.append(Choice(int(prompt), first, second, first if gap > 0 else second, abs(gap)))
        if len(choices) == wanted:
            break
    return choices, dropped


def simulate(rows: list[PromptRow], config: SimulationConfig, quiet: bool = False) -> Simulation:
    """Generate users, their choices and the items to predict.

    Args:
        rows: prompts with all rewards present (see ``reader.usable``).
        config: the simulation settings.
        quiet: do not print the notice about users with short histories.
    """
    weights = sample_weights(config.n_users, config.alpha, config.seed)
    scores = normalised_scores(rows, config.flip_cost)
    items: list[UserItem] = []
    near_ties = 0
    short = 0
    for user in range(config.n_users):
        choices, dropped = _walk(user, weights[user], scores, config)
        near_ties += dropped
        first_item = max(len(choices) - config.items_per_user, 0)
        for t in range(first_item, len(choices)):
            history = tuple(choices[max(t - config.k, 0):t])
            short += len(history) < config.k
            items.append(UserItem(user, choices[t], history))
    if short and not quiet:
        print(f"prb: PersonalLLM: {short} of {len(items)} items have fewer than k={config.k} earlier "
              f"choices ({len(rows)} prompts are too few for k + items_per_user clear choices per user)",
              file=sys.stderr)
    return Simulation(rows, config, weights, scores, items, near_ties, short)

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

With a ``preset`` (see :mod:`~prb_tasks.data.personalllm.presets`) histories are instead
the authors' interaction database, rebuilt draw for draw, and items are drawn on the
test split with the authors' pair and label rules (answers 1-7, exact ties go to the
second answer, nothing dropped).
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
from prb_tasks.data.personalllm.presets import PRESETS, Entry, draw_histories, draw_items
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
        k: earlier choices shown with each item; with a preset, the first ``k`` entries
            of the user's history (None: all of them).
        items_per_user: choices to predict per user.
        margin: pairs whose user rewards differ by no more than this are dropped
            (not used with a preset: the authors keep every pair).
        flip_cost: negate the cost model's z-score (the authors do not).
        preset: None (prb's own items) or a name in :data:`~prb_tasks.data.personalllm.presets.PRESETS`.
    """

    n_users: int = DEFAULT_USERS
    alpha: float = DEFAULT_ALPHA
    seed: int = DEFAULT_SEED
    k: int | None = DEFAULT_K
    items_per_user: int = DEFAULT_ITEMS_PER_USER
    margin: float = DEFAULT_MARGIN
    flip_cost: bool = False
    preset: str | None = None


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
        history_rows: the prompts history choices index (the train split under the
            public-script preset); None means :attr:`rows`.
        ties: comparisons (items and histories) whose two rewards are exactly equal
            (kept and labelled with the second answer under a preset).
    """

    rows: list[PromptRow]
    config: SimulationConfig
    weights: np.ndarray
    scores: np.ndarray
    items: list[UserItem]
    near_ties: int
    short_histories: int
    history_rows: list[PromptRow] | None = None
    ties: int = 0

    def history_prompt(self, choice: Choice) -> PromptRow:
        """The prompt row of a history choice."""
        return (self.history_rows if self.history_rows is not None else self.rows)[choice.prompt]

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
    wanted = (config.k or 0) + config.items_per_user
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


def authors_choice(entry: Entry, scores: np.ndarray, weights: np.ndarray) -> Choice:
    """The user's choice on ``entry`` by the authors' rule: the first answer if its
    reward is strictly higher, else the second (an exact tie goes to the second)."""
    pair = scores[entry.prompt, [entry.first, entry.second]] @ weights
    gap = float(pair[0] - pair[1])
    return Choice(entry.prompt, entry.first, entry.second, entry.first if gap > 0 else entry.second, abs(gap))


def simulate_preset(rows: list[PromptRow], config: SimulationConfig,
                    history_rows: list[PromptRow] | None = None) -> Simulation:
    """Users, histories and items under one of the authors' presets.

    Args:
        rows: test-split prompts (items are drawn on them).
        config: settings; ``config.preset`` names the preset.
        history_rows: prompts of the preset's history split (None: ``rows``).
    """
    assert config.preset is not None
    preset = PRESETS[config.preset]
    source = rows if history_rows is None else history_rows
    weights = sample_weights(config.n_users, config.alpha, config.seed)
    scores = normalised_scores(rows, config.flip_cost)
    history_scores = scores if history_rows is None else normalised_scores(source, config.flip_cost)
    items: list[UserItem] = []
    ties = short = 0
    for user, entries in enumerate(draw_histories(config.n_users, len(source), preset, config.seed)):
        history = [authors_choice(e, history_scores, weights[user]) for e in entries]
        shown = tuple(history if config.k is None else history[:config.k])
        short += config.k is not None and len(shown) < config.k
        ties += sum(c.gap == 0.0 for c in history)
        for entry in draw_items(user, len(rows), config.items_per_user, config.seed):
            choice = authors_choice(entry, scores, weights[user])
            ties += choice.gap == 0.0
            items.append(UserItem(user, choice, shown))
    return Simulation(rows, config, weights, scores, items, 0, short,
                      history_rows=None if history_rows is None else list(source), ties=ties)


def simulate(rows: list[PromptRow], config: SimulationConfig, quiet: bool = False,
             history_rows: list[PromptRow] | None = None) -> Simulation:
    """Generate users, their choices and the items to predict.

    Args:
        rows: prompts with all rewards present (see ``reader.usable``).
        config: the simulation settings.
        quiet: do not print the notice about users with short histories.
        history_rows: with a preset whose histories come from another split, its prompts.
    """
    if config.preset is not None:
        return simulate_preset(rows, config, history_rows)
    assert config.k is not None
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

"""The interface a personalization method implements, and the data it is given.

A method is asked three things, always in this order:

1. ``learn(seen)``: once, with every labelled pair of the seen users;
2. ``adapt(user, support)``: once per evaluated user and support size ``k``, with that
   user's ``k`` support pairs (none for ``k`` 0);
3. ``score(user, prompt, response)``: a reward for the user; a query pair counts as
   right when the chosen response scores strictly higher than the rejected one.

``adapt`` for a user replaces whatever an earlier ``adapt`` for the same user set up
(the same user comes back with larger support sets). Rewards are compared only within
one user's pair, so any scale will do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np


@dataclass(frozen=True)
class Response:
    """A response to score.

    Attributes:
        text: the response.
        features: frozen features of the response where the data has them
            (PersonalLLM: its ten z-scored reward-model scores, in
            :data:`~prb_tasks.data.personalllm.constants.REWARD_MODELS` order); None otherwise.
    """

    text: str
    features: np.ndarray | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Pair:
    """One labelled comparison of a user.

    Attributes:
        key: a stable name of the pair (unique within the dataset).
        prompt: the request.
        chosen: the response the user preferred.
        rejected: the other one.
    """

    key: str
    prompt: str
    chosen: Response
    rejected: Response


@dataclass(frozen=True)
class User:
    """Who a method adapts to or scores for.

    Attributes:
        user_id: the user's id.
        true_weights: the user's true reward weights where the data is simulated
            (PersonalLLM); None for real users. Only the oracle may read it.
    """

    user_id: str
    true_weights: np.ndarray | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SeenUser:
    """A user whose labels a method may learn from.

    Attributes:
        user: who.
        pairs: all of the user's labelled pairs, oldest first.
    """

    user: User
    pairs: tuple[Pair, ...]


class Method(ABC):
    """A personalization method. Subclasses take their options as keyword arguments
    (``--model_args method=NAME,option=value``) and set :attr:`name`."""

    name: ClassVar[str] = ""

    @abstractmethod
    def learn(self, seen: Sequence[SeenUser]) -> None:
        """Learn from the seen users (called once, before any ``adapt``).

        Args:
            seen: every seen user with all their pairs.
        """

    @abstractmethod
    def adapt(self, user: User, support: Sequence[Pair]) -> None:
        """Get ready to score for ``user`` from its support pairs.

        Args:
            user: the evaluated user.
            support: its ``k`` support pairs, oldest first (empty for ``k`` 0).
        """

    @abstractmethod
    def score(self, user: User, prompt: str, response: Response) -> float:
        """The reward of ``response`` to ``prompt`` for ``user`` (after ``adapt``).

        Args:
            user: the user adapted to last.
            prompt: the request.
            response: the response to score.
        """

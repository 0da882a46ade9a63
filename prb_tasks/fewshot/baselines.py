"""The shipped CPU baselines (numpy), all linear in frozen response features.

Every seen user gets a penalised Bradley-Terry fit of their own weights
(:mod:`~prb_tasks.fewshot.linear`), scaled to unit length; the *population* weights
are their mean. Then:

- ``nonpersonalized``: everyone is the population (what ``k`` 0 means for every
  method below: each one starts from exactly these weights);
- ``similar_users``: seen users weighted by how many of the new user's support pairs
  they order the same way (``exp(sharpness * agreements)``), and their rewards averaged
  with those weights: PersonalLLM's meta-learning idea of borrowing similar users'
  preferences;
- ``lowrank``: in LoRe's spirit, a basis of ``rank`` reward directions (the top
  principal directions of the seen users' weights around the population); a new user's
  weights are the population plus a mixture of the basis, the mixture fitted on the
  support pairs with an L2 penalty ``l2`` (so few pairs move it little);
- ``oracle``: the user's true weights (simulated data only): the ceiling.

The in-context judge is not here: it is a generative model run on the ``*_fewshot_judge``
tasks with ``--model prb-judge`` (see docs/personalization.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prb_tasks.fewshot.linear import differences, features_of, fit_offset, seen_weights
from prb_tasks.fewshot.method import Method, Pair, Response, SeenUser, User

DEFAULT_L2 = 1.0


class _Linear(Method):
    """A method whose reward for a user is ``weights[user] . features``."""

    def __init__(self, seen_l2: float = DEFAULT_L2) -> None:
        """
        Args:
            seen_l2: penalty of each seen user's own fit.
        """
        if seen_l2 <= 0:
            raise ValueError("seen_l2 must be positive")
        self.seen_l2 = float(seen_l2)
        self.population: np.ndarray | None = None
        self.seen: np.ndarray | None = None
        self.weights: dict[str, np.ndarray] = {}

    def learn(self, seen: Sequence[SeenUser]) -> None:
        self.seen = seen_weights(seen, self.seen_l2)
        self.population = self.seen.mean(axis=0)

    def adapt(self, user: User, support: Sequence[Pair]) -> None:
        self.weights[user.user_id] = self.fit(user, support)

    def fit(self, user: User, support: Sequence[Pair]) -> np.ndarray:
        """The user's weights from its support pairs (population weights by default)."""
        assert self.population is not None, "learn() first"
        return self.population

    def score(self, user: User, prompt: str, response: Response) -> float:
        return float(self.weights[user.user_id] @ features_of(response.features, self.name))


class NonPersonalized(_Linear):
    """The population's weights for everyone (ignores the support pairs)."""

    name = "nonpersonalized"


class SimilarUsers(_Linear):
    """Seen users weighted by agreement with the support pairs; their rewards averaged."""

    name = "similar_users"

    def __init__(self, sharpness: float = 2.0, seen_l2: float = DEFAULT_L2) -> None:
        """
        Args:
            sharpness: how strongly one more agreeing pair raises a seen user's weight
                (0: every seen user counts the same, i.e. non-personalized).
            seen_l2: penalty of each seen user's own fit.
        """
        super().__init__(seen_l2)
        if sharpness < 0:
            raise ValueError("sharpness must be >= 0")
        self.sharpness = float(sharpness)

    def fit(self, user: User, support: Sequence[Pair]) -> np.ndarray:
        assert self.seen is not None and self.population is not None, "learn() first"
        if not support:
            return self.population
        agreements = ((differences(support) @ self.seen.T) > 0).sum(axis=0)
        logits = self.sharpness * (agreements - agreements.max())
        vote = np.exp(logits)
        # Rewards are linear in the weights, so the weighted mean of the seen users'
        # rewards is the reward of their weighted mean weights.
        return (vote / vote.sum()) @ self.seen


class LowRank(_Linear):
    """Population weights plus a penalised mixture of a few learned basis directions."""

    name = "lowrank"

    def __init__(self, rank: int = 4, l2: float = DEFAULT_L2, seen_l2: float = DEFAULT_L2) -> None:
        """
        Args:
            rank: basis directions (at most the feature dimension).
            l2: penalty on the new user's mixture weights (larger: closer to the population).
            seen_l2: penalty of each seen user's own fit.
        """
        super().__init__(seen_l2)
        if rank < 1:
            raise ValueError("rank must be at least 1")
        if l2 <= 0:
            raise ValueError("l2 must be positive")
        self.rank, self.l2 = int(rank), float(l2)
        self.basis: np.ndarray | None = None

    def learn(self, seen: Sequence[SeenUser]) -> None:
        super().learn(seen)
        assert self.seen is not None and self.population is not None
        # Principal directions of the seen users around the population, scaled by their
        # spread, so the penalty on the mixture is a prior matching how users vary.
        _, sv, vt = np.linalg.svd(self.seen - self.population, full_matrices=False)
        r = min(self.rank, len(sv))
        self.basis = vt[:r] * (sv[:r, None] / np.sqrt(max(len(self.seen), 1)))

    def fit(self, user: User, support: Sequence[Pair]) -> np.ndarray:
        assert self.basis is not None and self.population is not None, "learn() first"
        if not support:
            return self.population
        a = fit_offset(differences(support), self.basis, self.population, self.l2)
        return self.population + a @ self.basis


class Oracle(_Linear):
    """The user's true weights (simulated users only): the ceiling."""

    name = "oracle"
    data_families = ("personalllm",)  # only simulated users have true weights

    def __init__(self) -> None:
        super().__init__()

    def learn(self, seen: Sequence[SeenUser]) -> None:
        """Nothing to learn."""

    def fit(self, user: User, support: Sequence[Pair]) -> np.ndarray:
        if user.true_weights is None:
            raise ValueError(f"the oracle needs true user weights, which only simulated data has "
                             f"(user {user.user_id} has none); use it on the PersonalLLM tasks")
        return np.asarray(user.true_weights, float)


BASELINES: dict[str, type[Method]] = {
    cls.name: cls for cls in (NonPersonalized, SimilarUsers, LowRank, Oracle)
}

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

What a method knows about a user is what the data knows, and nothing of the user's
held-out choices: :class:`User` carries the user's ``demographics`` and ``profile``
(free text about the person), which never hold a label; past choices, with their
``reason`` and value tags, are the :class:`Pair` objects a method is handed (every pair
of a seen user in ``learn``, only the support pairs of an evaluated user in ``adapt``).
Every field a family lacks is empty, so a method that ignores them runs unchanged.
:mod:`prb_tasks.fewshot.context` renders all of it as text to a budget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from prb_tasks.common.errors import PRBError

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def freeze(value: Any) -> Any:
    """A JSON-like value made read-only all the way down.

    Dicts become read-only mappings, lists tuples (so a method cannot change a user for
    the next method).
    """
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """:func:`freeze` undone: plain dicts and lists (for ``json.dumps``, templates)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


class MethodError(PRBError):
    """A method that cannot be found or built; the message is one line for the user."""


class MissingUserInfo(PRBError):
    """A method asked for something about a user that the data does not have."""


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
    """One labelled comparison of a user (a past choice, when a method is handed it).

    Attributes:
        key: a stable name of the pair (unique within the dataset).
        prompt: the request.
        chosen: the response the user preferred.
        rejected: the other one.
        reason: the user's own words on why (a custom file's ``reason``); empty when
            the data has none (PersonalLLM).
        values: the value tags of the choice (a custom file's ``value_alignment``, in
            the file's order); empty when the data has none.
    """

    key: str
    prompt: str
    chosen: Response
    rejected: Response
    reason: str = field(default="", compare=False)
    values: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(str(v) for v in self.values))


@dataclass(frozen=True)
class Post:
    """One piece of free text about (or by) a user.

    Attributes:
        text: the text.
        category: its topic where the data names one (Personalized RewardBench's post
            category); empty otherwise.
        id: its id where the data has one; empty otherwise.
    """

    text: str
    category: str = ""
    id: str = ""


def _post(item: Any) -> Post:
    """A profile item as a :class:`Post`.

    The item is a Post, a text, or anything with ``text`` (and maybe ``category`` and
    ``id``, as Personalized RewardBench's posts).
    """
    if isinstance(item, Post):
        return item
    if isinstance(item, str):
        return Post(item)
    if hasattr(item, "text"):
        return Post(str(item.text), str(getattr(item, "category", "") or ""), str(getattr(item, "id", "") or ""))
    raise TypeError(f"a profile item must be a text or a Post, not {type(item).__name__}")


@dataclass(frozen=True)
class User:
    """Who a method adapts to or scores for.

    What the data knows about the person beyond their labelled choices (those are the
    :class:`Pair` objects a method gets).

    Two users are equal when their ids are; every field but the id defaults to empty,
    so ``User("u1")`` is a user the data knows nothing about.

    Attributes:
        user_id: the user's id.
        true_weights: the user's true reward weights where the data is simulated
            (PersonalLLM); None for real users. Only the oracle may read it.
        demographics: attributes of the person, read-only, in the data's order (a
            custom file's ``demographics``: ``{"age": 29, "country": "Japan"}``; nested
            lists come as tuples). Empty for PersonalLLM's simulated users.
        profile: free text about the person (a custom file's ``profile``; Personalized
            RewardBench's past posts of the asker), as :class:`Post` objects (texts and
            objects with a ``text`` are converted). Empty when the data has none
            (PersonalLLM). Never derived from the user's labelled pairs.
        family: where the user comes from (``personalllm``, ``custom``,
            ``personalized_rb``; empty when built by hand), for messages.
    """

    user_id: str
    true_weights: np.ndarray | None = field(default=None, compare=False)
    demographics: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False)
    profile: tuple[Post, ...] = field(default=(), compare=False)
    family: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "demographics", freeze(dict(self.demographics or {})))
        posts = (self.profile,) if isinstance(self.profile, (str, Post)) else tuple(self.profile or ())
        object.__setattr__(self, "profile", tuple(_post(p) for p in posts))

    def require(self, what: str) -> Any:
        """``demographics`` or ``profile``, or one line saying the data has none.

        For a method that cannot work without them: ``user.require("demographics")``.

        Args:
            what: ``demographics`` or ``profile``.
        """
        if what not in ("demographics", "profile"):
            raise ValueError(f"User.require: '{what}' is not something a user carries; ask for "
                             "'demographics' or 'profile' (past choices are the pairs a method is handed)")
        value = getattr(self, what)
        if value:
            return value
        shape = "an object of attributes" if what == "demographics" else "a text or a list of texts"
        from prb_tasks.data import families

        # The family's declaration says what its users carry; a user built by hand has none.
        family = families.families_by_name().get(self.family)
        if family is not None and family.data_is_file:
            raise MissingUserInfo(f"user '{self.user_id}' has no {what} in your file, and this method needs it; "
                                  f"give that user a \"{what}\" key ({shape})")
        has = family.users_have if family is not None and family.users_have else "the data has none for this user"
        raise MissingUserInfo(f"user '{self.user_id}' has no {what} ({has}), and this method needs it; run it on "
                              f"personalized_custom_fewshot with a file whose users have \"{what}\" ({shape})")


@dataclass(frozen=True)
class SeenUser:
    """A user whose labels a method may learn from.

    Attributes:
        user: who.
        pairs: all of the user's labelled pairs, oldest first.
    """

    user: User
    pairs: tuple[Pair, ...]


@dataclass(frozen=True)
class SplitFacts:
    """What decided an evaluation's split, for a method that must check it (no labels).

    Attributes:
        settings: the settings that decide which users are seen (``split_seed``,
            ``unseen_share``, the simulation's ``n_users`` ..., ``data_digest`` of a file).
        seen: the seen users' ids.
        unseen: the evaluated users' ids.
        family: the family the users come from ("" when unknown).
    """

    settings: Mapping[str, Any]
    seen: tuple[str, ...]
    unseen: tuple[str, ...]
    family: str = ""


class Method(ABC):
    """A personalization method.

    Subclasses take their options as keyword arguments
    (``--model_args method=NAME,option=value``) and set :attr:`name`.
    """

    name: ClassVar[str] = ""
    #: The data families the method can run on (empty: every one); the few-shot loader checks
    #: it before any data is loaded or embedded.
    data_families: ClassVar[tuple[str, ...]] = ()

    def check_split(self, facts: SplitFacts) -> None:
        """Refuse a split this method cannot be evaluated on fairly (called before ``learn``).

        A method that arrives trained (a checkpoint) overrides it to refuse users it trained
        on; the default accepts every split.

        Args:
            facts: the split's settings and user ids.
        """

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

    def score_batch(self, user: User, items: Sequence[tuple[str, Response]]) -> list[float]:
        """The rewards of several (prompt, response) items for ``user`` (after ``adapt``), in order.

        The evaluation hands a method every query response of one user at one k at once.
        This default calls :meth:`score` once per item; a method that scores faster in
        batches (a neural reward model) overrides it, and must return the same numbers.

        Args:
            user: the user adapted to last.
            items: (prompt, response) to score, one reward each.
        """
        return [self.score(user, prompt, response) for prompt, response in items]


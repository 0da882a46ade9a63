"""Run a method over a split: learn once, adapt per (user, k), score each query pair.

The ``prb-method`` backend asks for the scores of the queries lm-eval hands it;
benchmarks and tests call :func:`run` for every query of every k.
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm

from prb_tasks.fewshot.linear import MissingFeatures
from prb_tasks.fewshot.method import Method, MissingUserInfo
from prb_tasks.fewshot.registry import MethodError
from prb_tasks.fewshot.sources import FewshotData

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    """One scored query pair.

    Attributes:
        k: support size.
        user_id: the user.
        key: the query pair's key.
        chosen: reward of the chosen response.
        rejected: reward of the rejected one.
    """

    k: int
    user_id: str
    key: str
    chosen: float
    rejected: float

    @property
    def correct(self) -> int:
        """1 when the chosen response scores strictly higher (a tie is wrong)."""
        return int(self.chosen > self.rejected)


def _shown(value: Any) -> str:
    """A method's return value as a message may show it (short)."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def reward(value: Any, where: str) -> float:
    """A method's ``score`` result as a finite float; one line naming ``where`` otherwise.

    Python and NumPy real scalars are accepted; None, bools, arrays, strings and
    non-finite numbers (NaN, inf) are not: a NaN compares false with everything and
    would silently count every pair wrong.

    Args:
        value: what ``score`` returned.
        where: the method, the call and the user, for the message.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise MethodError(f"{where} returned {_shown(value)}; it must return one real number (a float, an int "
                          "or a NumPy scalar)")
    number = float(value)
    if not math.isfinite(number):
        raise MethodError(f"{where} returned {number}; it must return a finite number")
    return number


class Session:
    """A method bound to one split; ``learn`` runs on the first request.

    Every call into the method is checked: an exception, or a score that is not one
    finite number, stops with one line naming the method, the call and the user
    (:class:`~prb_tasks.fewshot.registry.MethodError`).

    Args:
        method: the method.
        data: the split and its users.
        time_limit: seconds that ``learn``, and each user's ``adapt`` plus the scoring of
            its queries at one k, may take (None: no limit). A call still running then
            stops the run with one line; it is left running in a background thread that
            ends with the process.
        label: how the messages name the method: what the user passed (``method=my_module:MyMethod``);
            None: the method's ``name`` (or its class name).
    """

    def __init__(self, method: Method, data: FewshotData, time_limit: float | None = None,
                 label: str | None = None) -> None:
        self.method = method
        self.data = data
        self.time_limit = time_limit
        self.label = label
        self._learned = False
        self._adapted: tuple[str, int] | None = None
        self._unseen = {u.user_id: u for u in data.split.unseen}

    def _label(self, call: str) -> str:
        return f"prb-method ({self.label or self.method.name or type(self.method).__name__}): {call}"

    def _guarded(self, call: str, fn: Callable[[], T]) -> T:
        """``fn()``; its exception as one line naming the call."""
        try:
            return fn()
        except (MethodError, MissingFeatures):  # already one line (MissingFeatures: the data lacks features)
            raise
        except MissingUserInfo as exc:  # the data lacks what the method asked for: say which call asked
            raise MethodError(f"{self._label(call)}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the method's own bug: name where it happened, not a traceback
            message = " ".join(str(exc).split())[:300]
            raise MethodError(f"{self._label(call)} raised {type(exc).__name__}"
                              f"{': ' + message if message else ''}") from None

    def _bounded(self, call: str, fn: Callable[[], T]) -> T:
        """``fn()`` within :attr:`time_limit` seconds."""
        if not self.time_limit:
            return fn()
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
                box["error"] = exc

        # A daemon thread: a call that never returns cannot keep the process alive.
        worker = threading.Thread(target=work, name="prb-method call", daemon=True)
        worker.start()
        worker.join(self.time_limit)
        if worker.is_alive():
            raise MethodError(f"{self._label(call)} did not return within method_time_limit="
                              f"{self.time_limit:g} s; raise the limit or fix the method")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def scores(self, user_id: str, k: int, keys: Iterable[str]) -> list[tuple[float, float]]:
        """(chosen, rejected) rewards of the query pairs ``keys`` of ``user_id`` at ``k``.

        Args:
            user_id: an evaluated user.
            k: support size.
            keys: query pair keys of that user.
        """
        if not self._learned:
            seen = self.data.seen_users()
            facts = self.data.facts()
            self._guarded("check_split()", lambda: self.method.check_split(facts))
            self._bounded("learn()", lambda: self._guarded("learn()", lambda: self.method.learn(seen)))
            self._learned = True
        self.data.users[user_id]  # an unknown user fails here, before the method is called
        keys = list(keys)
        return self._bounded(f"adapt() and score() for user {user_id!r} at k={k}",
                             lambda: self._adapt_and_score(user_id, k, keys))

    def _adapt_and_score(self, user_id: str, k: int, keys: list[str]) -> list[tuple[float, float]]:
        user = self.data.users[user_id]
        if self._adapted != (user_id, k):
            support = self._unseen[user_id].support(k)
            self._adapted = None  # a failed adapt leaves nothing adapted
            self._guarded(f"adapt() for user {user_id!r} at k={k}", lambda: self.method.adapt(user, support))
            self._adapted = (user_id, k)
        if type(self.method).score_batch is not Method.score_batch:
            return self._score_batched(user, user_id, k, keys)
        out = []
        for key in keys:
            pair = self.data.pairs[key]
            where = f"score() for user {user_id!r} at k={k}, query pair {key!r}"
            rewards = []
            for response in (pair.chosen, pair.rejected):
                value = self._guarded(where, partial(self.method.score, user, pair.prompt, response))
                rewards.append(reward(value, self._label(where)))
            out.append((rewards[0], rewards[1]))
        return out

    def _score_batched(self, user: Any, user_id: str, k: int, keys: list[str]) -> list[tuple[float, float]]:
        """Every query response of the user at ``k`` in one ``score_batch`` call (a method that
        overrides it); each reward checked as ``score``'s are."""
        pairs = [self.data.pairs[key] for key in keys]
        items = [(pair.prompt, response) for pair in pairs for response in (pair.chosen, pair.rejected)]
        where = f"score_batch() for user {user_id!r} at k={k}"
        values = self._guarded(where, lambda: list(self.method.score_batch(user, items)))
        if len(values) != len(items):
            raise MethodError(f"{self._label(where)} returned {len(values)} rewards for {len(items)} responses; "
                              "it must return one per (prompt, response), in order")
        checked = [reward(value, self._label(f"{where}, query pair {key!r}"))
                   for key, value in zip((key for key in keys for _ in range(2)), values)]
        return list(zip(checked[0::2], checked[1::2]))


def run(method: Method, data: FewshotData, progress: bool = False,
        time_limit: float | None = None, ks: Iterable[int] | None = None) -> list[Outcome]:
    """Every query of every evaluated user at every k of the split.

    Args:
        method: the method (``learn`` is called here).
        data: the split.
        progress: show a progress bar over (user, k) adaptations.
        time_limit: see :class:`Session`.
        ks: only these support sizes, each one of the split's (None: all of them); a check
            that reads one k need not pay for adapting every user at the others.
    """
    wanted = data.split.ks if ks is None else tuple(sorted(set(ks)))
    unknown = sorted(set(wanted) - set(data.split.ks))
    if unknown:
        raise ValueError(f"k = {unknown} is not a support size of this split ({list(data.split.ks)})")
    session = Session(method, data, time_limit)
    todo = [(k, u) for k in wanted for u in data.split.evaluated(k)]
    outcomes: list[Outcome] = []
    for k, unseen in tqdm(todo, desc=f"prb-method ({method.name})", unit="adapt", disable=not progress):
        keys = [p.key for p in unseen.queries]
        for key, (c, r) in zip(keys, session.scores(unseen.user_id, k, keys)):
            outcomes.append(Outcome(k, unseen.user_id, key, c, r))
    return outcomes

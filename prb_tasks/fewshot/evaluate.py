"""Run a method over a split: learn once, adapt per (user, k), score each query pair.

The ``prb-method`` backend asks for the scores of the queries lm-eval hands it;
benchmarks and tests call :func:`run` for every query of every k.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tqdm import tqdm

from prb_tasks.fewshot.method import Method
from prb_tasks.fewshot.sources import FewshotData


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


class Session:
    """A method bound to one split; ``learn`` runs on the first request.

    Args:
        method: the method.
        data: the split and its users.
    """

    def __init__(self, method: Method, data: FewshotData) -> None:
        self.method = method
        self.data = data
        self._learned = False
        self._adapted: tuple[str, int] | None = None
        self._unseen = {u.user_id: u for u in data.split.unseen}

    def scores(self, user_id: str, k: int, keys: Iterable[str]) -> list[tuple[float, float]]:
        """(chosen, rejected) rewards of the query pairs ``keys`` of ``user_id`` at ``k``.

        Args:
            user_id: an evaluated user.
            k: support size.
            keys: query pair keys of that user.
        """
        if not self._learned:
            self.method.learn(self.data.seen_users())
            self._learned = True
        user = self.data.users[user_id]
        if self._adapted != (user_id, k):
            self.method.adapt(user, self._unseen[user_id].support(k))
            self._adapted = (user_id, k)
        out = []
        for key in keys:
            pair = self.data.pairs[key]
            out.append((float(self.method.score(user, pair.prompt, pair.chosen)),
                        float(self.method.score(user, pair.prompt, pair.rejected))))
        return out


def run(method: Method, data: FewshotData, progress: bool = False) -> list[Outcome]:
    """Every query of every evaluated user at every k of the split.

    Args:
        method: the method (``learn`` is called here).
        data: the split.
        progress: show a progress bar over (user, k) adaptations.
    """
    session = Session(method, data)
    todo = [(k, u) for k in data.split.ks for u in data.split.evaluated(k)]
    outcomes: list[Outcome] = []
    for k, unseen in tqdm(todo, desc=f"prb-method ({method.name})", unit="adapt", disable=not progress):
        keys = [p.key for p in unseen.queries]
        for key, (c, r) in zip(keys, session.scores(unseen.user_id, k, keys)):
            outcomes.append(Outcome(k, unseen.user_id, key, c, r))
    return outcomes

"""Every user's time-ordered labelled pairs, from PersonalLLM or a custom file, and
the split of them that a run's documents and its method share.

The loader builds a :class:`FewshotData` and keeps it here under a key it writes into
every document (``split_key``); the ``prb-method`` backend finds it by that key, as
the profile-based RM baselines find profiles (:mod:`prb_tasks.data.profile_store`).
"""

from __future__ import annotations

from dataclasses import dataclass

from prb_tasks.data.custom.schema import UserRecord
from prb_tasks.data.personalllm.items import Simulation
from prb_tasks.fewshot.method import Pair, Response, SeenUser, User
from prb_tasks.fewshot.split import Split


@dataclass
class FewshotData:
    """A split with what a method needs to run on it.

    Attributes:
        split: seen and unseen users' pairs.
        users: user id -> the user (true weights on simulated data).
        pairs: pair key -> pair, for every pair of every user.
        source: ``personalllm`` or ``custom``, for messages.
    """

    split: Split[Pair]
    users: dict[str, User]
    pairs: dict[str, Pair]
    source: str

    def seen_users(self) -> list[SeenUser]:
        """The seen users with all their pairs, in user-id order."""
        return [SeenUser(self.users[u], pairs) for u, pairs in self.split.seen.items()]


def personalllm_pairs(sim: Simulation) -> tuple[dict[str, list[Pair]], dict[str, User]]:
    """Each simulated user's choices (their walk, in order) as pairs with features.

    Args:
        sim: a simulation with ``items_per_user`` 1, whose one item per user holds the
            user's whole walk (the history, then the item's own choice).
    """
    from prb_tasks.docs.personalllm import user_name

    by_user: dict[str, list[Pair]] = {}
    users: dict[str, User] = {}
    for item in sim.items:
        uid = user_name(item.user)
        users[uid] = User(uid, sim.weights[item.user])
        out = by_user.setdefault(uid, [])
        for choice in (*item.history, item.choice):
            row = sim.rows[choice.prompt]
            out.append(Pair(
                f"{uid}/p{row.index}/{choice.first + 1}-{choice.second + 1}", row.prompt,
                Response(row.responses[choice.chosen], sim.scores[choice.prompt, choice.chosen]),
                Response(row.responses[choice.rejected], sim.scores[choice.prompt, choice.rejected]),
            ))
    return by_user, users


def custom_pairs(records: list[UserRecord]) -> tuple[dict[str, list[Pair]], dict[str, User]]:
    """Each user's preferences in file order (taken as time order), without features.

    Args:
        records: validated users of a custom file.
    """
    by_user = {
        r.user_id: [Pair(f"{r.user_id}/{i}", p.prompt, Response(p.chosen), Response(p.rejected))
                    for i, p in enumerate(r.preferences)]
        for r in records
    }
    return by_user, {r.user_id: User(str(r.user_id)) for r in records}


_STORE: dict[str, FewshotData] = {}


def remember(key: str, data: FewshotData) -> None:
    """Keep ``data`` for the documents that name ``key``."""
    _STORE[key] = data


def lookup(key: str) -> FewshotData:
    """The data behind a document's ``split_key``; a clear error when no loader kept it."""
    try:
        return _STORE[key]
    except KeyError:
        raise KeyError(f"prb-method: no few-shot split loaded for '{key}'; prb-method runs the *_fewshot "
                       "tasks loaded in the same process") from None

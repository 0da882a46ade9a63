"""Every user's time-ordered labelled pairs, from PersonalLLM or a custom file, and
the split of them that a run's documents and its method share.

The loader builds a :class:`FewshotData` and keeps it here under a key it writes into
every document (``split_key``); the ``prb-method`` backend finds it by that key, as
the profile-based RM baselines find profiles (:mod:`prb_tasks.data.profile_store`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from prb_tasks.data.custom.schema import UserRecord
from prb_tasks.data.people import Person, clearest
from prb_tasks.data.personalized_rb.schema import PRBRow
from prb_tasks.data.personalllm.items import Simulation
from prb_tasks.fewshot.method import Pair, Post, Response, SeenUser, SplitFacts, User
from prb_tasks.fewshot.split import Split


@dataclass
class FewshotData:
    """A split with what a method needs to run on it.

    Attributes:
        split: seen and unseen users' pairs.
        users: user id -> the user (true weights on simulated data; demographics and profile
            text where the data has them).
        pairs: pair key -> pair, for every pair of every user.
        source: ``personalllm`` or ``custom``, for messages.
        settings: what decided the split (protocol keys, simulation keys, the file's digest),
            so a trained checkpoint can check it is evaluated on the split it was trained for.
    """

    split: Split[Pair]
    users: dict[str, User]
    pairs: dict[str, Pair]
    source: str
    settings: dict[str, Any] = field(default_factory=dict)

    def facts(self) -> SplitFacts:
        """The split's settings and user ids (:meth:`~prb_tasks.fewshot.method.Method.check_split`)."""
        return SplitFacts(dict(self.settings), tuple(self.split.seen), tuple(u.user_id for u in self.split.unseen),
                          self.source)

    def seen_users(self) -> list[SeenUser]:
        """The seen users with all their pairs, in user-id order."""
        return [SeenUser(self.users[u], pairs) for u, pairs in self.split.seen.items()]


def personalllm_pairs(sim: Simulation) -> tuple[dict[str, list[Pair]], dict[str, User]]:
    """Each simulated user's choices (their walk, in order) as pairs with features.

    Args:
        sim: a simulation with ``items_per_user`` 1, whose one item per user holds the
            user's whole walk (the history, then the item's own choice).
    """
    from prb_tasks.data.personalllm.users import user_name

    by_user: dict[str, list[Pair]] = {}
    users: dict[str, User] = {}
    for item in sim.items:
        uid = user_name(item.user)
        # Simulated users are weights, not people: no demographics, no text, no reasons.
        users[uid] = User(uid, sim.weights[item.user], family="personalllm")
        out = by_user.setdefault(uid, [])
        for choice in (*item.history, item.choice):
            row = sim.rows[choice.prompt]
            out.append(Pair(
                f"{uid}/p{row.index}/{choice.first + 1}-{choice.second + 1}", row.prompt,
                Response(row.responses[choice.chosen], sim.scores[choice.prompt, choice.chosen]),
                Response(row.responses[choice.rejected], sim.scores[choice.prompt, choice.rejected]),
            ))
    return by_user, users


def custom_pairs(records: Iterable[UserRecord]) -> tuple[dict[str, list[Pair]], dict[str, User]]:
    """Each user's preferences in file order (taken as time order), without features,
    each with its ``reason`` and value tags; each user with the file's ``demographics``
    and ``profile``.

    Args:
        records: validated users of a custom file, read once (a stream of them is let go
            user by user: only the pairs and users built from them are kept).
    """
    by_user: dict[str, list[Pair]] = {}
    users: dict[str, User] = {}
    for r in records:
        uid = str(r.user_id)
        by_user[uid] = [Pair(f"{r.user_id}/{i}", p.prompt, Response(p.chosen), Response(p.rejected),
                             reason=p.reason, values=tuple(p.value_alignment))
                        for i, p in enumerate(r.preferences)]
        users[uid] = User(uid, demographics=r.demographics, profile=tuple(Post(t) for t in r.profile_texts),
                          family="custom")
    return by_user, users


def people_pairs(family: str, people: tuple[Person, ...]) -> tuple[dict[str, list[Pair]], dict[str, User]]:
    """Real people's choices (PRISM, Community Alignment) as the protocol's pairs: one per turn
    (:func:`~prb_tasks.data.people.clearest`), in the data's order, each with the person's reason;
    each person with their demographics and profile texts (the text's heading as its category).

    Args:
        family: the family's name (each user's ``family``).
        people: the people read.
    """
    by_user = {p.person_id: [Pair(c.key, c.prompt, Response(c.chosen), Response(c.rejected), reason=c.reason)
                             for c in clearest(p.choices, exclude="")] for p in people}
    users = {p.person_id: User(p.person_id, demographics=p.demographics,
                               profile=tuple(Post(text, name) for name, text in p.profile), family=family)
             for p in people}
    return by_user, users


def personalized_rb_user(row: PRBRow) -> User:
    """The asker of a Personalized RewardBench row as a :class:`User`: the row's past
    posts as the profile, no demographics (the data has none).

    The benchmark has no user id and one pair per row, so the few-shot protocol (which
    needs several labelled pairs per user) does not run on it; this is for methods and
    RMs that condition on a row's profile (the row's ``id`` is the user's id). The
    row's ``rubric_aspects`` and ``narrative`` are its scoring standard and are left out.

    Args:
        row: a validated benchmark row.
    """
    return User(row.id, profile=tuple(Post(p.text, p.category, p.id) for p in row.profile),
                family="personalized_rb")


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

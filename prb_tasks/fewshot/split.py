"""The few-shot protocol: which users a method learns from, and what it is tested on.

Users are split into *seen* (every labelled pair available to ``learn``) and *unseen*
(evaluated). The split is a seeded permutation of the user ids sorted as strings
(numpy's PCG64, which gives the same stream on every platform), so it depends only on
the ids, the seed and the share, never on file order or hash randomisation.

Each unseen user's pairs are taken in time order (a custom file's order; a simulated
PersonalLLM user's walk). The last ``queries`` pairs are the user's fixed query set;
the up to ``max(KS)`` pairs just before them are the support pool; the support set of
size ``k`` is the ``k`` most recent pairs of the pool. Support sets are therefore
nested (the 2-shot set is inside the 4-shot set), a query is never in any support set,
and a user is scored on the same queries at every ``k`` it is evaluated at. The curves over
``k`` are comparable while every ``k`` has the same users; a user short of pairs drops out
of the larger ``k`` (below), and the user set then changes with ``k``.

A user with fewer than ``queries`` pairs is evaluated at no ``k``; a user whose pool is
shorter than ``k`` is not evaluated at that ``k``. Both are listed in
:attr:`Split.short` (k -> user ids) so a report can say who is missing, never silently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

#: Support-set sizes evaluated, the same for every method.
KS: tuple[int, ...] = (0, 1, 2, 4, 8, 16)
DEFAULT_QUERIES = 8
DEFAULT_UNSEEN_SHARE = 0.5
DEFAULT_SPLIT_SEED = 0
#: Who is evaluated on what (the three splits of VPL, PAL and LoRe), by the ``evaluate`` key:
#: the unseen users (nothing of theirs is learned from); the seen users on their latest
#: ``queries`` pairs, held out of what the method learns from; the seen users on pairs it
#: learned from (a sanity row: near the training accuracy, never a result).
EVALUATE = {"unseen_users": "unseen users", "seen_users_unseen_prompts": "seen users, unseen prompts",
            "seen_users_seen_prompts": "seen users, seen prompts (sanity)"}
DEFAULT_EVALUATE = "unseen_users"
#: How many users a shortfall line names before it counts the rest ("and N more").
SHORTFALL_NAMED = 3

P = TypeVar("P")


def name_a_few(names: Sequence[str], shown: int = SHORTFALL_NAMED) -> str:
    """The first ``shown`` of ``names``, comma-separated, then how many more (for one-line messages)."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


@dataclass(frozen=True)
class UnseenUser(Generic[P]):
    """An evaluated user's pairs, split once.

    Attributes:
        user_id: the user.
        pool: support pool, oldest first (at most ``max(KS)`` pairs).
        queries: the fixed query set (the user's latest pairs).
    """

    user_id: str
    pool: tuple[P, ...]
    queries: tuple[P, ...]

    def support(self, k: int) -> tuple[P, ...]:
        """The ``k`` most recent pairs of the pool (empty for ``k`` 0)."""
        if k > len(self.pool):
            raise ValueError(f"user {self.user_id} has {len(self.pool)} support pairs, fewer than k={k}")
        return self.pool[len(self.pool) - k:] if k else ()


@dataclass(frozen=True)
class Split(Generic[P]):
    """Seen and unseen users of one dataset.

    Attributes:
        seen: user id -> every pair of that user (time order).
        unseen: evaluated users, in user-id order.
        ks: the support sizes evaluated.
        short: k -> ids of unseen users not evaluated at that k (too few pairs).
        seed: the seed of the user split.
        queries: query pairs per evaluated user.
        evaluate: who ``unseen`` holds (:data:`EVALUATE`): the unseen users, or the seen ones.
    """

    seen: dict[str, tuple[P, ...]]
    unseen: tuple[UnseenUser[P], ...]
    ks: tuple[int, ...] = KS
    short: dict[int, tuple[str, ...]] = field(default_factory=dict)
    seed: int = DEFAULT_SPLIT_SEED
    queries: int = DEFAULT_QUERIES
    evaluate: str = DEFAULT_EVALUATE

    def evaluated(self, k: int) -> list[UnseenUser[P]]:
        """Unseen users evaluated at ``k`` (enough pairs for the query set and k support pairs)."""
        return [u for u in self.unseen if len(u.queries) == self.queries and len(u.pool) >= k]

    def shortfall_lines(self) -> list[str]:
        """One line per k that misses users, naming three of them and counting the rest."""
        lines = []
        for k, users in sorted(self.short.items()):
            if users:
                # A few names show who; a list of hundreds of ids ran far past a terminal's width.
                named = name_a_few(users)
                who = "unseen" if self.evaluate == DEFAULT_EVALUATE else "evaluated"
                lines.append(f"k={k}: {len(users)} of {len(self.unseen)} {who} users have too few pairs "
                             f"(need {self.queries} queries + {k} support) and are not evaluated: {named}")
        return lines


def split_users(user_ids: Sequence[str], unseen_share: float = DEFAULT_UNSEEN_SHARE,
                seed: int = DEFAULT_SPLIT_SEED) -> tuple[list[str], list[str]]:
    """(seen, unseen) user ids, each sorted; disjoint and together all of ``user_ids``.

    Args:
        user_ids: every user (duplicates are an error).
        unseen_share: share of users evaluated (rounded, at least one, and at least one
            seen user when there are two or more users).
        seed: seed of the permutation.
    """
    ids = sorted(str(u) for u in user_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("user ids must be distinct")
    if not 0.0 < unseen_share < 1.0:
        raise ValueError(f"unseen_share must be between 0 and 1 (exclusive), not {unseen_share}")
    n_unseen = min(max(1, round(len(ids) * unseen_share)), max(len(ids) - 1, 1))
    order = np.random.default_rng(seed).permutation(len(ids))
    unseen = sorted(ids[i] for i in order[:n_unseen])
    chosen = set(unseen)
    return [u for u in ids if u not in chosen], unseen


def make_split(pairs_by_user: Mapping[str, Sequence[P]], unseen_share: float = DEFAULT_UNSEEN_SHARE,
               seed: int = DEFAULT_SPLIT_SEED, queries: int = DEFAULT_QUERIES,
               ks: Sequence[int] = KS, evaluate: str = DEFAULT_EVALUATE) -> Split[P]:
    """The protocol's split of every user's time-ordered pairs.

    Args:
        pairs_by_user: user id -> that user's labelled pairs, oldest first.
        unseen_share: share of users evaluated.
        seed: seed of the seen/unseen split.
        queries: the fixed query set's size per evaluated user.
        ks: support sizes to evaluate (sorted, distinct, starting anywhere from 0).
        evaluate: who is evaluated (:data:`EVALUATE`): the unseen users; or the seen users, each
            with its latest ``queries`` pairs as queries, left out of its learned pairs
            (``seen_users_unseen_prompts``) or kept in them (``seen_users_seen_prompts``). The
            users split the same way in all three, so one split_seed names one set of seen users.
    """
    if evaluate not in EVALUATE:
        raise ValueError(f"evaluate: one of {', '.join(EVALUATE)}, not {evaluate!r}")
    if queries < 1:
        raise ValueError("queries must be at least 1")
    ks = tuple(sorted(set(int(k) for k in ks)))
    if not ks or ks[0] < 0:
        raise ValueError("ks must be non-negative")
    seen_ids, unseen_ids = split_users(list(pairs_by_user), unseen_share, seed)
    by_id = {str(u): tuple(p) for u, p in pairs_by_user.items()}
    learned = {u: by_id[u] for u in seen_ids}
    if evaluate != DEFAULT_EVALUATE:
        unseen_ids = list(seen_ids)
        if evaluate == "seen_users_unseen_prompts":
            learned = {u: p[:max(len(p) - queries, 0)] for u, p in learned.items()}
    unseen: list[UnseenUser[P]] = []
    for uid in unseen_ids:
        pairs = by_id[uid]
        if len(pairs) < queries:
            unseen.append(UnseenUser(uid, (), pairs))
            continue
        rest = pairs[:len(pairs) - queries]
        unseen.append(UnseenUser(uid, rest[max(len(rest) - ks[-1], 0):], pairs[len(pairs) - queries:]))
    short = {k: tuple(u.user_id for u in unseen if len(u.queries) < queries or len(u.pool) < k) for k in ks}
    return Split(learned, tuple(unseen), ks, short, seed, queries, evaluate)


def split_digest(split: Split[P], key: Callable[[P], str]) -> str:
    """A short hash of everything the split decides, with each pair named by ``key``
    (for checking that two machines made the same split)."""
    view = {
        "seen": {u: [key(p) for p in ps] for u, ps in split.seen.items()},
        "unseen": [[u.user_id, [key(p) for p in u.pool], [key(p) for p in u.queries]] for u in split.unseen],
        "ks": list(split.ks),
    }
    return hashlib.sha256(json.dumps(view, sort_keys=True).encode()).hexdigest()[:16]

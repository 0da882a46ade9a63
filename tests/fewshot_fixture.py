"""Constructed users with known weights, for the few-shot protocol's tests."""

from __future__ import annotations

import numpy as np

from prb_tasks.fewshot.method import Pair, Response, User
from prb_tasks.fewshot.sources import FewshotData
from prb_tasks.fewshot.split import make_split


def constructed(n_users: int = 120, pairs: int = 40, dim: int = 6, seed: int = 3, margin: float = 0.5,
                unseen_share: float = 0.5, queries: int = 8) -> FewshotData:
    """Users whose weights mix two hidden tastes; each pair is clear (the true rewards
    differ by more than ``margin``) and labelled by the true weights."""
    rng = np.random.default_rng(seed)
    tastes = rng.normal(size=(2, dim))
    users: dict[str, User] = {}
    by_user: dict[str, list[Pair]] = {}
    for n in range(n_users):
        uid = f"u{n:03d}"
        w = rng.dirichlet([0.3, 0.3]) @ tastes
        users[uid] = User(uid, w)
        out: list[Pair] = []
        while len(out) < pairs:
            a, b = rng.normal(size=(2, dim))
            gap = (a - b) @ w
            if abs(gap) <= margin:
                continue
            chosen, rejected = (a, b) if gap > 0 else (b, a)
            out.append(Pair(f"{uid}/{len(out)}", f"prompt {len(out)}", Response("x", chosen), Response("y", rejected)))
        by_user[uid] = out
    split = make_split(by_user, unseen_share=unseen_share, seed=0, queries=queries)
    return FewshotData(split, users, {p.key: p for ps in by_user.values() for p in ps}, "constructed")

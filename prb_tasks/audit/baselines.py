"""Content-blind shortcuts: rules that pick a response without judging it for the user.

Each rule gives the two responses of a pair a number and picks the higher; a tie is
a coin flip and counts 1/2. A rule that does not apply to a pair (no profile, no
known order) leaves it out, and the table says how many pairs it measured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from prb_tasks.audit.data import AuditPair
from prb_tasks.data import profile_store
from prb_tasks.text.bm25 import BM25Index

Scores = tuple[float, float] | None


def _characters(text: str) -> float:
    # Characters, as prb-rm's `length` scorer counts them.
    return float(len(text.strip()))


def longer(pair: AuditPair) -> Scores:
    return _characters(pair.chosen), _characters(pair.rejected)


def shorter(pair: AuditPair) -> Scores:
    return -_characters(pair.chosen), -_characters(pair.rejected)


def _overlap(texts: tuple[str, ...], pair: AuditPair) -> Scores:
    """BM25 of each response (as the query) against ``texts`` (as the collection), summed,
    as prb-rm's ``bm25`` scorer does with a user's posts."""
    if not any(t.strip() for t in texts):
        return None
    index = BM25Index(texts)
    return float(sum(index.scores(pair.chosen))), float(sum(index.scores(pair.rejected)))


def question_overlap(pair: AuditPair) -> Scores:
    return _overlap((pair.question,), pair)


def profile_overlap(pair: AuditPair) -> Scores:
    if pair.profile_key is None:
        return None
    return _overlap(profile_store.lookup(pair.profile_key), pair)


def position(pair: AuditPair) -> Scores:
    if pair.chosen_first is None:
        return None
    return (1.0, 0.0) if pair.chosen_first else (0.0, 1.0)


@dataclass(frozen=True)
class Baseline:
    """One shortcut.

    Attributes:
        name: short name in the table.
        rule: what it picks, in a few words.
        scores: the pair's (chosen, rejected) numbers, or None when the rule does not apply.
        prepare: for a rule that reads the whole data set (what other people chose): builds
            ``scores`` from every pair (None: ``scores`` is used as it is).
    """

    name: str
    rule: str
    scores: Callable[[AuditPair], Scores]
    prepare: Callable[[list[AuditPair]], Callable[[AuditPair], Scores]] | None = None


BASELINES: tuple[Baseline, ...] = (
    Baseline("longer", "the response with more characters", longer),
    Baseline("shorter", "the response with fewer characters", shorter),
    Baseline("question overlap", "more BM25 overlap with the question", question_overlap),
    Baseline("profile overlap", "more BM25 overlap with the user's profile / earlier choices", profile_overlap),
    Baseline("position", "the response the data lists first", position),
)


def outcomes(baseline: Baseline, pairs: list[AuditPair]) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: the rule's credit (1 right, 1/2 tie, 0 wrong; NaN where it does not
    apply) and whether it was a tie.

    Args:
        baseline: the rule.
        pairs: the data set's pairs.
    """
    credit = np.full(len(pairs), np.nan)
    tie = np.zeros(len(pairs), dtype=bool)
    score = baseline.prepare(pairs) if baseline.prepare is not None else baseline.scores
    for i, pair in enumerate(pairs):
        scores = score(pair)
        if scores is None:
            continue
        chosen, rejected = scores
        tie[i] = chosen == rejected
        credit[i] = 0.5 if tie[i] else float(chosen > rejected)
    return credit, tie

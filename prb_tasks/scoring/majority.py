"""The majority baseline of real people's data, one rule for ``prb audit`` and ``prb eval``: on a pair
other people also answered, predict what most of *them* chose.

Each other person counts once per item (the request and its two answers): one who met the same pair
several times and chose differently votes for each answer in proportion to how often they chose it,
so meeting an item twice never doubles a vote, and a split person never votes for both sides in full.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from fractions import Fraction


def majority_credits(entries: Sequence[tuple[str | None, str, str]]) -> list[float | None]:
    """Per pair, the credit of the other people's majority: 1 where more of them chose this pair's chosen
    answer, 0 where fewer did, 1/2 on a tie; None where nobody else answered the pair (or it has no item).

    Args:
        entries: per pair, ``(item, person, chosen answer)``: the item two people's identical pairs
            share, who answered, and an id of the answer they chose (its text or its hash).
    """
    votes: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for item, person, answer in entries:
        if item is not None:
            votes[item][person][answer] += 1
    out: list[float | None] = []
    for item, person, answer in entries:
        others = [picks for who, picks in votes[item].items() if who != person] if item is not None else []
        if not others:
            out.append(None)
            continue
        right = sum((Fraction(picks[answer], sum(picks.values())) for picks in others), Fraction(0))
        wrong = len(others) - right
        out.append(0.5 if right == wrong else float(right > wrong))
    return out

"""Soft verdicts scored: soft accuracy, calibration and accuracy against coverage.

A judge run with ``logprobs=`` marks each reply with ``p_first``, the probability it gave
position A's answer at its verdict (:mod:`prb_tasks.replies.soft_verdict`). Per pair:

- the soft score ``s`` is the probability given to the user's chosen answer, averaged over
  the two orders (``p_first`` where chosen was A, ``1 - p_first`` where it was B), so a
  judge's preference for a position cancels out. Only pairs with a soft verdict in both
  orders have one; ``soft_cover`` says what share of the pairs that is;
- its confidence is ``max(s, 1 - s)`` and its soft verdict is right when ``s > 0.5``
  (``s == 0.5``, a tie, counts half).

Metrics (each over the pairs with a soft score):

- ``soft_acc``: mean ``s``, the accuracy expected when drawing the verdict from the soft score;
- ``ece``: expected calibration error: pairs binned by confidence into :data:`BINS` equal bins
  over 0.5-1, the mean |accuracy - confidence| of a bin weighted by its pairs;
- ``acc_cov<q>``: accuracy of the soft verdicts on the ``q`` percent of pairs the judge is
  surest of (:data:`COVERAGES`); pairs tied in confidence at the cut count at their mean
  accuracy, so the value does not depend on their order. ``acc_cov100`` is all of them.

Each document whose reply answers a request for log-probabilities (it carries a mark) emits
``(pair_key, (chosen_position, p_first or None))``; replies without a mark (a run without
``logprobs=``, a failed or skipped judgment, an empty reply) emit none, so such a run reports
no soft metric and a pair missing a reply has no soft score.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from prb_tasks.replies.soft_verdict import read_mark
from prb_tasks.scoring.group_weights import Measured

#: Confidence bins of the calibration error and the reliability diagram (over 0.5-1).
BINS = 10
#: Coverages of the accuracy-versus-coverage curve, in percent of the pairs with a soft score.
COVERAGES = (20, 40, 60, 80, 100)
METRICS = ("soft_acc", "soft_cover", "ece", *(f"acc_cov{q}" for q in COVERAGES))
_NAN = float("nan")

Item = tuple[str, tuple[str, float | None]]


@dataclass(frozen=True)
class SoftPair:
    """One pair's soft score.

    Attributes:
        score: probability given to the chosen answer, averaged over the two orders.
    """

    score: float

    @property
    def confidence(self) -> float:
        """How sure the soft verdict is: ``max(score, 1 - score)``, 0.5 to 1."""
        return max(self.score, 1.0 - self.score)

    @property
    def correct(self) -> float:
        """1 when the soft verdict names the chosen answer, 0.5 for a tie, else 0."""
        return 1.0 if self.score > 0.5 else 0.5 if self.score == 0.5 else 0.0


def soft_item(doc: dict[str, Any], completion: object) -> Item:
    """What one document of a both-order pair gives the soft metrics.

    Args:
        doc: the document (its ``pair_key`` and ``chosen_position``).
        completion: the judge's reply, perhaps with a soft verdict mark.
    """
    soft = read_mark(completion)
    return (str(doc["pair_key"]), (str(doc["chosen_position"]), soft.p_first if soft is not None else None))


def soft_metrics(doc: dict[str, Any], completion: object) -> dict[str, Item]:
    """Every soft metric's item for one document (the same item feeds each aggregation)."""
    item = soft_item(doc, completion)
    return {name: item for name in METRICS}


def soft_pairs(items: Iterable[Item]) -> tuple[list[SoftPair], int]:
    """The pairs with a soft verdict in both orders, and how many pairs there are in all.

    Args:
        items: what :func:`soft_item` gave each document.
    """
    grouped: dict[str, list[tuple[str, float | None]]] = defaultdict(list)
    for key, value in items:
        grouped[key].append(value)
    pairs = []
    for orders in grouped.values():
        probs = [p if position == "A" else 1.0 - p for position, p in orders if p is not None]
        if len(orders) == 2 and len(probs) == 2:
            pairs.append(SoftPair(sum(probs) / 2))
    return pairs, len(grouped)


def soft_accuracy(items: Iterable[Item]) -> Measured:
    """Mean probability given to the chosen answer over the pairs with a soft score."""
    pairs, _ = soft_pairs(items)
    return Measured(sum(p.score for p in pairs) / len(pairs), len(pairs)) if pairs else Measured(_NAN, 0)


def soft_coverage(items: Iterable[Item]) -> Measured:
    """Share of the pairs that have a soft score (a soft verdict in both orders)."""
    pairs, total = soft_pairs(items)
    return Measured(len(pairs) / total, total) if total else Measured(_NAN, 0)


@dataclass(frozen=True)
class Bin:
    """One bin of the reliability diagram.

    Attributes:
        low: the bin's lowest confidence.
        high: its highest (included only in the last bin).
        pairs: pairs in it.
        confidence: their mean confidence.
        accuracy: their accuracy (ties half).
    """

    low: float
    high: float
    pairs: int
    confidence: float
    accuracy: float


def reliability(pairs: list[SoftPair], bins: int = BINS) -> list[Bin]:
    """The reliability diagram's bins that hold pairs.

    Args:
        pairs: the pairs with a soft score.
        bins: equal-width bins over confidences 0.5-1.
    """
    width = 0.5 / bins
    filled: dict[int, list[SoftPair]] = defaultdict(list)
    for pair in pairs:
        # A confidence on a bin's edge goes to the bin above (the tolerance keeps 0.6 out of 0.55-0.6).
        filled[min(int((pair.confidence - 0.5) / width + 1e-9), bins - 1)].append(pair)
    return [Bin(0.5 + i * width, 0.5 + (i + 1) * width, len(members),
                sum(p.confidence for p in members) / len(members), sum(p.correct for p in members) / len(members))
            for i, members in sorted(filled.items())]


def calibration_error(items: Iterable[Item]) -> Measured:
    """Expected calibration error of the soft verdicts (0: confidence matches accuracy)."""
    pairs, _ = soft_pairs(items)
    if not pairs:
        return Measured(_NAN, 0)
    error = sum(b.pairs * abs(b.accuracy - b.confidence) for b in reliability(pairs)) / len(pairs)
    return Measured(error, len(pairs))


def accuracy_at_coverage(pairs: list[SoftPair], percent: float) -> float:
    """Accuracy on the ``percent`` % of pairs with the highest confidence (NaN without pairs).

    Pairs tied in confidence across the cut count at their mean accuracy.
    """
    if not pairs:
        return _NAN
    keep = max(1, math.ceil(len(pairs) * percent / 100 - 1e-9))
    ranked = sorted(pairs, key=lambda p: -p.confidence)
    cut = ranked[keep - 1].confidence
    above = [p for p in ranked if p.confidence > cut]
    tied = [p for p in ranked if p.confidence == cut]
    rest = keep - len(above)
    total = sum(p.correct for p in above) + rest * sum(p.correct for p in tied) / len(tied)
    return total / keep


def _at(percent: int) -> Any:
    def aggregate(items: Iterable[Item]) -> Measured:
        pairs, _ = soft_pairs(items)
        return Measured(accuracy_at_coverage(pairs, percent), math.ceil(len(pairs) * percent / 100))

    aggregate.__name__ = f"acc_at_coverage_{percent}"
    aggregate.__doc__ = f"Accuracy of the soft verdicts on the {percent}% of pairs the judge is surest of."
    return aggregate


acc_cov20 = _at(20)
acc_cov40 = _at(40)
acc_cov60 = _at(60)
acc_cov80 = _at(80)
acc_cov100 = _at(100)

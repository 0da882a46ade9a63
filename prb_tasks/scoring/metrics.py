"""Per-document scoring (lm-eval ``process_results``) and the aggregations it needs.

Judge tasks with both orders hold two documents per pair; metrics about a pair
(``acc_pair``, ``consistency``) are emitted per document as ``(pair_key, value)`` and
combined by the aggregations below, which ignore pairs missing an order (``--limit``).
The aggregations return :class:`~prb_tasks.scoring.group_weights.Measured` values (the
number of items behind each), so group rows weight subsets by what was measured.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from prb_tasks.scoring.group_weights import Measured
from prb_tasks.scoring.verdict import official_letter, parse_verdict

_NAN = float("nan")

# One line per metric, printed under lm-eval's table by ``prb eval``.
JUDGE_LEGEND = (
    "acc: share of judgments naming the user's chosen answer (unparsed, errors, skipped count wrong)",
    "acc_macro: in a group row, the plain mean of the three subsets (acc there is size-weighted)",
    "acc_pair: share of pairs judged right in both orders; consistency: same answer preferred in both orders",
    "pos_a_rate: share of verdicts naming position A (0.5 = no position bias)",
    "parse_fail / error_rate / skip_rate: no readable verdict / request failed / not sent (max_cost)",
    "acc_official (official tasks): the original script's reading, where a missing verdict counts as A",
)
SCALAR_LEGEND = (
    "acc: share of pairs where the chosen answer scored strictly higher (ties count wrong)",
    "acc_macro: in a group row, the plain mean of the three subsets (acc there is size-weighted)",
    "tie_rate: share of pairs where both answers got the same score",
)


def _judgment(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    completion = results[0] if results else None
    verdict = parse_verdict(completion)
    chosen_pos = doc["chosen_position"]
    correct = int(verdict.letter == chosen_pos)
    preferred = None
    if verdict.letter is not None:
        preferred = "chosen" if verdict.letter == chosen_pos else "rejected"
    return {
        "acc": correct,
        "acc_macro": correct,
        "pos_a_rate": verdict.letter,
        "parse_fail": int(verdict.outcome == "unparsed"),
        "error_rate": int(verdict.outcome == "error"),
        "skip_rate": int(verdict.outcome == "skipped"),
        "_preferred": preferred,
    }


def process_judge_both(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """Score one order of a pair judged in both orders."""
    out = _judgment(doc, results)
    preferred = out.pop("_preferred")
    out["acc_pair"] = (doc["pair_key"], out["acc"])
    out["consistency"] = (doc["pair_key"], preferred)
    return out


def process_judge_single(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """Score a pair judged in one order (the official protocol)."""
    out = _judgment(doc, results)
    out.pop("_preferred")
    completion = results[0] if results else None
    if out["error_rate"] or out["skip_rate"]:
        out["acc_official"] = 0
    else:
        out["acc_official"] = int(official_letter(completion) == doc["chosen_position"])
    return out


def process_scalar(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """Score a pair from the two rewards ``[chosen, rejected]``; a tie is wrong."""
    chosen, rejected = (float(r[0]) if isinstance(r, (tuple, list)) else float(r) for r in results[:2])
    correct = int(chosen > rejected)
    return {"acc": correct, "acc_macro": correct, "tie_rate": int(chosen == rejected)}


def _complete_pairs(items: Iterable[tuple[str, Any]]) -> list[list[Any]]:
    grouped: dict[str, list[Any]] = defaultdict(list)
    for key, value in items:
        grouped[key].append(value)
    return [values for values in grouped.values() if len(values) == 2]


def pair_all_correct(items: Iterable[tuple[str, int]]) -> float:
    """Share of pairs whose two orders were both judged correctly."""
    pairs = _complete_pairs(items)
    if not pairs:
        return Measured(_NAN, 0)
    return Measured(sum(all(v) for v in pairs) / len(pairs), len(pairs))


def pair_consistency(items: Iterable[tuple[str, str | None]]) -> float:
    """Share of pairs where both orders preferred the same response (unparsed: inconsistent)."""
    pairs = _complete_pairs(items)
    if not pairs:
        return Measured(_NAN, 0)
    return Measured(sum(v[0] is not None and v[0] == v[1] for v in pairs) / len(pairs), len(pairs))


def share_of_a(items: Iterable[str | None]) -> float:
    """Share of parsed verdicts that name position A."""
    parsed = [x for x in items if x in ("A", "B")]
    if not parsed:
        return Measured(_NAN, 0)
    return Measured(sum(x == "A" for x in parsed) / len(parsed), len(parsed))


def is_nan(value: float) -> bool:
    """True for NaN, the value of a metric with nothing to measure."""
    return isinstance(value, float) and math.isnan(value)

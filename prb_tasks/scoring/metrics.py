"""Per-document scoring (lm-eval ``process_results``) and the aggregations it needs.

Judge tasks with both orders hold two documents per pair; metrics about a pair
(``acc_pair``, ``consistency``) are emitted per document as ``(pair_key, value)`` and
combined by the aggregations below, which ignore pairs missing an order (``--limit``).
Per-position metrics (``acc_pos_a``, ``acc_pos_b``, ``pos_bias``) are emitted as
``(chosen_position, correct)``: in both-order tasks every pair gives one judgment to
each position, in the official task each pair gives one to the position its seeded
draw chose.

The aggregations return :class:`~prb_tasks.scoring.group_weights.Measured` values (the
number of items behind each), so group rows weight subsets by what was measured: for
``acc_pos_a`` / ``acc_pos_b`` that is the pooled accuracy over all judgments with the
chosen answer in that position. For ``pos_bias`` it is the mean of the subsets' biases
weighted by their judgments: the mean bias a reader of the per-subset numbers sees. It
is not |group acc_pos_a - group acc_pos_b|, where opposite biases in two subsets would
cancel.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from prb_tasks.replies.soft_verdict import has_mark
from prb_tasks.replies.verdict import parse_verdict
from prb_tasks.scoring.group_weights import Measured
from prb_tasks.scoring.official import official_judgment
from prb_tasks.scoring.soft import soft_metrics

_NAN = float("nan")

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
        **_per_position(chosen_pos, correct),
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
    out["double_game"] = (doc["pair_key"], game_vote(preferred))
    # Soft verdicts: only replies to a request for log-probabilities (logprobs=) carry a mark; a run
    # without them reports no soft metric at all rather than a column of NaN.
    completion = results[0] if results else None
    if has_mark(completion):
        out.update(soft_metrics(doc, completion))
    return out


def game_vote(preferred: str | None) -> int:
    """One order's vote in the double game.

    +1 for the chosen answer, -1 for the rejected one, 0 without a verdict (unparsed,
    failed, skipped).

    Args:
        preferred: ``"chosen"``, ``"rejected"`` or None, as the judgment named it.
    """
    return 1 if preferred == "chosen" else -1 if preferred == "rejected" else 0


def _per_position(chosen_pos: str, correct: int, suffix: str = "") -> dict[str, tuple[str, int]]:
    # One value feeds three aggregations; see acc_chosen_in_a / _b and position_bias.
    item = (chosen_pos, correct)
    return {f"acc_pos_a{suffix}": item, f"acc_pos_b{suffix}": item, f"pos_bias{suffix}": item}


def process_judge_single(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """Score a pair judged in one order (the official protocol).

    Besides our own metrics, the ``*_official`` ones re-read the completion as the
    original script does (:mod:`prb_tasks.scoring.official`): a verdict it cannot read
    counts as "A". A judgment with no completion (request failed, budget) counts
    wrong there too, and is neither a letter nor a parse failure.
    """
    out = _judgment(doc, results)
    out.pop("_preferred")
    chosen_pos = doc["chosen_position"]
    reading = official_judgment(results[0] if results else None)
    correct = int(reading is not None and reading.letter == chosen_pos)
    out["acc_official"] = correct
    out.update(_per_position(chosen_pos, correct, "_official"))
    out["pos_a_rate_official"] = reading.letter if reading is not None else None
    out["parse_fail_official"] = int(reading is not None and reading.parse_failed)
    # What a judge that always answers A scores on the same pairs: the floor acc_official
    # falls to when the replies carry no readable verdict (they all count as A).
    out["always_a_official"] = int(chosen_pos == "A")
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


def pair_all_correct(items: Iterable[tuple[str, int]]) -> Measured:
    """Share of pairs whose two orders were both judged correctly."""
    pairs = _complete_pairs(items)
    if not pairs:
        return Measured(_NAN, 0)
    return Measured(sum(all(v) for v in pairs) / len(pairs), len(pairs))


def pair_consistency(items: Iterable[tuple[str, str | None]]) -> Measured:
    """Share of pairs where both orders preferred the same response (unparsed: inconsistent)."""
    pairs = _complete_pairs(items)
    if not pairs:
        return Measured(_NAN, 0)
    return Measured(sum(v[0] is not None and v[0] == v[1] for v in pairs) / len(pairs), len(pairs))


def double_game(items: Iterable[tuple[str, int]]) -> Measured:
    """JudgeBench's double-game score: share of pairs whose two votes sum above zero.

    The votes are :func:`game_vote`'s. An order-inconsistent pair nets 0 and scores
    nothing; a right order beside an order without a verdict counts.
    """
    pairs = _complete_pairs(items)
    if not pairs:
        return Measured(_NAN, 0)
    return Measured(sum(sum(v) > 0 for v in pairs) / len(pairs), len(pairs))


def _accuracy_where(items: Iterable[tuple[str, int]], position: str) -> Measured:
    hits = [int(correct) for pos, correct in items if pos == position]
    return Measured(sum(hits) / len(hits) if hits else _NAN, len(hits))


def acc_chosen_in_a(items: Iterable[tuple[str, int]]) -> Measured:
    """Accuracy over the judgments that showed the chosen answer as A (NaN if none)."""
    return _accuracy_where(items, "A")


def acc_chosen_in_b(items: Iterable[tuple[str, int]]) -> Measured:
    """Accuracy over the judgments that showed the chosen answer as B (NaN if none)."""
    return _accuracy_where(items, "B")


def position_bias(items: Iterable[tuple[str, int]]) -> Measured:
    """|accuracy with chosen in A - accuracy with chosen in B| (NaN if a position is empty)."""
    items = list(items)
    in_a, in_b = acc_chosen_in_a(items), acc_chosen_in_b(items)
    if not (in_a.measured and in_b.measured):
        return Measured(_NAN, 0)
    return Measured(abs(in_a - in_b), in_a.measured + in_b.measured)


def share_of_a(items: Iterable[str | None]) -> Measured:
    """Share of parsed verdicts that name position A."""
    parsed = [x for x in items if x in ("A", "B")]
    if not parsed:
        return Measured(_NAN, 0)
    return Measured(sum(x == "A" for x in parsed) / len(parsed), len(parsed))

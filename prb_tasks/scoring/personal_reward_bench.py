"""PersonalRewardBench's two official computations, step for step, beside prb's clean one.

**P-GenRM** (``Tongyi-ConvAI/Qwen-Character``, ``Character-GenRM/inference/vllm_batch_inference.py``):
each test pair is judged once, in one order; the reply must hold a JSON object between ``<JSON_START>``
and ``<JSON_END>`` whose ``better_response`` maps exactly two keys to scores; ``response_1``'s score
against ``response_2``'s (a missing key reads -1) picks the answer. A pair is *dropped* from the
denominator when the request failed, the markers are missing, the JSON does not load, ``better_response``
does not hold exactly two scores, the scores tie, or comparing them raises; the accuracy is correct over
kept, pooled over users. :func:`pgenrm_outcome` reads one reply so; ``acc_pgenrm`` is their number and
``dropped_*`` say how many pairs each rule dropped.

**SynthesizeMe** (``SALT-NLP/SynthesizeMe``, ``personalrm/default_judge.py`` ``evaluate``): every test
pair is judged in both orders; a verdict for the chosen answer scores 1, anything else (the other
answer, a tie, a failed call) 0; the accuracy is the mean over the 2N judgments with scipy's ``basic``
bootstrap interval over those judgments (95%, 9,999 resamples). ``acc_synthesizeme`` and its bounds
are that computation (prb fixes the bootstrap's seed; theirs draws a fresh one per run).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK, parse_verdict

#: What can happen to one P-GenRM judgment; all but ``correct`` and ``wrong`` are dropped.
PGENRM_OUTCOMES = ("correct", "wrong", "request_failed", "no_json_markers", "bad_json", "not_two_scores", "tie",
                   "incomparable")
DROPPED = PGENRM_OUTCOMES[2:]
_NAN = float("nan")
_LOG = logging.getLogger("lm_eval.prb_tasks")


def extract_json(reply: str) -> str | None:
    """The text between the first ``<JSON_START>`` and the first ``<JSON_END>``, stripped (their
    ``extract_content``); None when either marker is missing."""
    start = reply.find("<JSON_START>")
    end = reply.find("<JSON_END>")
    if start < 0 or end < 0:
        return None
    return reply[start + len("<JSON_START>"):end].strip()


def pgenrm_outcome(reply: Any, chosen_is_first: bool, same_text: bool = False) -> str:
    """How P-GenRM's script counts one reply (one of :data:`PGENRM_OUTCOMES`).

    Args:
        reply: the judge's reply (a backend's error or skip marker, or None: the request failed).
        chosen_is_first: the chosen answer was shown as ``response_1``.
        same_text: chosen and rejected are the same text (their script compares texts, so either pick
            is correct).
    """
    if not isinstance(reply, str) or reply.startswith((ERROR_MARK, SKIPPED_MARK)):
        return "request_failed"
    body = extract_json(reply)
    if body is None:
        return "no_json_markers"
    try:
        parsed = json.loads(body)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return "bad_json"
    try:
        scores = parsed.get("better_response", {})
        if not scores or len(scores) != 2:
            return "not_two_scores"
        first, second = scores.get("response_1", -1), scores.get("response_2", -1)
        if first == second:
            return "tie"
        picked_first = bool(first > second)
    except (AttributeError, KeyError, IndexError, TypeError):
        # Their try block catches KeyError, IndexError, TypeError, JSONDecodeError; a reply whose JSON is
        # not an object raises AttributeError there, which their thread pool reports and skips.
        return "incomparable"
    return "correct" if same_text or picked_first == chosen_is_first else "wrong"


def process_pgenrm(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """Score one P-GenRM judgment: their outcome, and prb's clean reading of the same reply.

    ``acc`` (prb: a dropped judgment counts wrong) and ``acc_user`` keep every pair; ``acc_pgenrm``
    carries the outcome, which its aggregation counts as their script does.
    """
    reply = results[0] if results else None
    outcome = pgenrm_outcome(reply, doc["chosen_position"] == "A", bool(doc.get("same_text")))
    correct = int(outcome == "correct")
    out: dict[str, Any] = {"acc": correct, "acc_pgenrm": outcome, "acc_user": (doc["user_id"], correct),
                           "kept_pgenrm": int(outcome in ("correct", "wrong"))}
    out.update({f"dropped_{why}": int(outcome == why) for why in DROPPED})
    return out


def pgenrm_accuracy(items: Iterable[str]) -> float:
    """Correct over kept judgments (their denominator); logs how many were dropped and why.

    Args:
        items: one outcome per judgment (:data:`PGENRM_OUTCOMES`).
    """
    counts = Counter(items)
    kept = counts["correct"] + counts["wrong"]
    dropped = {why: counts[why] for why in DROPPED if counts[why]}
    total = sum(counts.values())
    if dropped:
        listed = ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in dropped.items())
        _LOG.warning("P-GenRM: %d of %d judgments dropped from acc_pgenrm (%s)", sum(dropped.values()), total,
                     listed)
    return counts["correct"] / kept if kept else _NAN


def synthesizeme_results(doc: dict[str, Any], results: Sequence[Any]) -> int:
    """One judgment as SynthesizeMe scores it: 1 when the verdict names the chosen answer, else 0
    (``max(0, result)`` over the +1 / -1 / 0 of their ``predict_pairwise``)."""
    verdict = parse_verdict(results[0] if results else None)
    return int(verdict.letter == doc["chosen_position"])


#: prb's metrics the SynthesizeMe tasks report beside theirs (every key returned must be in the YAML).
_SYNTHESIZEME_RIDE_ALONG = ("acc", "acc_user", "consistency", "parse_fail", "error_rate")


def process_synthesizeme(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """prb's both-order metrics plus SynthesizeMe's accuracy and its bootstrap bounds."""
    from prb_tasks.scoring.breakdowns import process_judge_both_users

    both = process_judge_both_users(doc, results)
    out = {name: both[name] for name in _SYNTHESIZEME_RIDE_ALONG}
    score = synthesizeme_results(doc, results)
    out.update({"acc_synthesizeme": score, "acc_synthesizeme_low": score, "acc_synthesizeme_high": score})
    return out


def _bootstrap_bounds(values: Sequence[float]) -> tuple[float, float]:
    import numpy as np
    from scipy.stats import bootstrap

    data = np.asarray(values, dtype=float)
    if len(data) < 2 or np.all(data == data[0]):
        mean = float(data.mean()) if len(data) else _NAN
        return mean, mean
    found = bootstrap((data,), np.mean, confidence_level=0.95, method="basic", random_state=0)
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def synthesizeme_low(items: Sequence[int]) -> float:
    """The lower bound of SynthesizeMe's 95% basic bootstrap interval over judgments."""
    return _bootstrap_bounds(list(items))[0]


def synthesizeme_high(items: Sequence[int]) -> float:
    """The upper bound of SynthesizeMe's 95% basic bootstrap interval over judgments."""
    return _bootstrap_bounds(list(items))[1]


def count(items: Iterable[int]) -> int:
    """How many judgments a ``dropped_*`` rule dropped (a count, not a share)."""
    return int(sum(items))

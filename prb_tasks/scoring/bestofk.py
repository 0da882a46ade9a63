"""Best-of-k on Personalized RewardBench: how good, for this user, is the candidate a model picks?

A policy wrote ``N`` candidates per question (``personalized_rb_bon_sample``); a grader
scored each once against the row's rubric aspects (``personalized_rb_bon_grade``:
0, 1 or 2 per aspect, averaged, so a gold score lies in 0-2). A contestant scores every
candidate; best-of-k takes the highest-scored of the *first* k candidates (fixed
order, as the authors and ``personalllm_bon`` do) and looks up the pick's gold score.
No grader call depends on the contestant.

Every number is an exact expectation over ties (:func:`prb_tasks.scoring.bestofn.top_indices`:
the pick is uniform among the top-scored candidates; an unreadable score ranks lowest):

- ``bon_gold_kK``: mean gold score of the pick;
- ``bon_gain_kK``: the same minus best-of-1's (the first candidate's gold score);
- ``bon_top_kK``: chance the pick is a gold-best of those k candidates;
- ``bon_gold`` / ``bon_gain`` / ``bon_top``: the same at k = N (all candidates);
- ``ungraded``: share of questions left out because one of their candidates has no
  readable gold grade (never counted as 0).

Metrics for a k above the run's N are NaN and are left out of means.

Documents of the ``official`` preset (``rule: official``) are read by the authors' rules
instead (:mod:`prb_tasks.replies.bon_official`): their grade parsing (an unreadable grade
is 0) and their pick (the first of tied rewards).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from prb_tasks.replies import bon_official as official
from prb_tasks.replies.grades import parse_grade
from prb_tasks.replies.pointwise import parse_score
from prb_tasks.replies.verdict import marker_outcome
from prb_tasks.scoring import bon_official as official_picks
from prb_tasks.scoring.bestofn import top_indices

SIZES = (1, 2, 4, 8, 16)
FIELDS = ("gold", "gain", "top")
METRICS = (
    tuple(f"bon_{field}_k{k}" for k in SIZES for field in FIELDS if not (field == "gain" and k == 1))
    + tuple(f"bon_{field}" for field in FIELDS)
)
_NAN = float("nan")


# ----------------------------------------------------------------------------- gold grades


def process_grade(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
    """One candidate's gold grade (``gold`` NaN when unreadable, counted apart).

    Args:
        doc: a ``personalized_rb_bon_grade`` document (``aspects``: how many).
        results: the grader's completion.
    """
    if doc.get("rule") == official.RULE:
        # The authors' reading: every reply is a grade (0 when no number); only a failed
        # or skipped request is none.
        completion = results[0] if results else None
        value = official.official_grade(completion)
        marked = marker_outcome(completion)
        return {"gold": value if value is not None else _NAN, "grade_unparsed": 0.0,
                "error_rate": float(marked == "error"), "skip_rate": float(marked == "skipped")}
    reading = parse_grade(results[0] if results else None, int(doc["aspects"]))
    return {
        "gold": reading.value if reading.value is not None else _NAN,
        "grade_unparsed": float(reading.outcome == "unparsed"),
        "error_rate": float(reading.outcome == "error"),
        "skip_rate": float(reading.outcome == "skipped"),
    }


def nanmean(values: Iterable[Any]) -> float:
    """Mean of the numbers that are not NaN (NaN when there are none): metrics a question
    does not have (k above N, ungraded questions) stay out of the mean."""
    kept = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(kept) / len(kept) if kept else _NAN


def keep_all(resps: Iterable[Any], docs: Any) -> Iterable[Any]:
    """lm-eval filter that keeps every repeat of a request (the default keeps the first):
    the N replies of a question are its candidates."""
    return resps


def process_candidates(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
    """What lm-eval can report about one question's N candidates: mean length, and the
    share that are empty or failed (failed generations leave the question out later).

    Args:
        doc: a ``personalized_rb_bon_sample`` document.
        results: one entry holding the N replies (or the N replies themselves).
    """
    texts = list(results[0]) if results and isinstance(results[0], (list, tuple)) else list(results)
    failed = [marker_outcome(t) is not None for t in texts]
    good = [t for t, bad in zip(texts, failed) if not bad]
    return {
        "candidate_words": nanmean(len(t.split()) for t in good),
        "empty_candidate": sum(not t.strip() for t in good) / len(texts) if texts else _NAN,
        "failed_candidate": sum(failed) / len(texts) if texts else _NAN,
    }


# ----------------------------------------------------------------------------- best-of-k


@dataclass(frozen=True)
class Pick:
    """Expected result of one best-of-k pick.

    Attributes:
        gold: mean gold score of the pick.
        top: chance the pick has the highest gold score of the k candidates.
    """

    gold: float
    top: float


def best_of_k(scores: Sequence[Optional[float]], gold: Sequence[float], k: int) -> Pick:
    """The pick among the first ``k`` candidates, in expectation over ties.

    Args:
        scores: the contestant's score of each candidate (None: no score; ranks lowest).
        gold: each candidate's gold score.
        k: how many of the first candidates compete.
    """
    if k < 1 or len(scores) < k or len(gold) < k:
        raise ValueError(f"best-of-{k} needs {k} scores and gold scores")
    chosen = top_indices(list(scores[:k]))
    pool = [float(g) for g in gold[:k]]
    best = max(pool)
    return Pick(sum(pool[i] for i in chosen) / len(chosen),
                sum(pool[i] == best for i in chosen) / len(chosen))


def question_metrics(scores: Sequence[Optional[float]], gold: Sequence[Optional[float]]) -> dict[str, float]:
    """Every best-of-k metric of one question (see the module docstring).

    Args:
        scores: the contestant's score of each of the N candidates.
        gold: the gold score of each candidate; None: unreadable grade, which leaves
            the question out (every metric NaN, ``ungraded`` 1).
    """
    out = {name: _NAN for name in METRICS}
    if any(g is None or math.isnan(float(g)) for g in gold):
        return {**out, "ungraded": 1.0}
    graded = [float(g) for g in gold if g is not None]  # all of them (checked above)
    n = len(graded)
    first = graded[0]
    for k in sorted({*(size for size in SIZES if size <= n), n}):
        pick = best_of_k(scores, graded, k)
        suffix = f"_k{k}" if k in SIZES else ""
        values = {"gold": pick.gold, "gain": pick.gold - first, "top": pick.top}
        for field, value in values.items():
            if k in SIZES and not (field == "gain" and k == 1):
                out[f"bon_{field}{suffix}"] = value
            if k == n:
                out[f"bon_{field}"] = value
    return {**out, "ungraded": 0.0}


def _gold(doc: dict[str, Any]) -> list[Optional[float]]:
    return [None if g is None else float(g) for g in doc["gold"]]


def process_bon_scalar(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
    """Best-of-k metrics of one question from the RM's reward of each candidate.

    Args:
        doc: a ``personalized_rb_bon`` document (``choices``: the candidates, ``gold``).
        results: one ``(reward, is_greedy)`` per candidate, in order.
    """
    rewards = [float(r[0]) if isinstance(r, (tuple, list)) else float(r) for r in results]
    if len(rewards) != len(doc["gold"]):
        raise ValueError(f"expected {len(doc['gold'])} rewards, got {len(rewards)}")
    if doc.get("rule") == official.RULE:
        return official_picks.question_metrics(rewards, _gold(doc), SIZES, METRICS)
    return question_metrics(rewards, _gold(doc))


def process_bon_judge(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One candidate's 1-10 rating; the best-of-k metrics are assembled per question on
    aggregation (:func:`group_metrics`)."""
    reading = parse_score(results[0] if results else None)
    entry = (doc["pair_key"], int(doc["candidate"]), reading.value, tuple(doc["gold"]))
    out: dict[str, Any] = {name: entry for name in (*METRICS, "ungraded")}
    out["parse_fail"] = int(reading.outcome == "unparsed")
    out["error_rate"] = int(reading.outcome == "error")
    out["skip_rate"] = int(reading.outcome == "skipped")
    return out


def group_metrics(entries: Iterable[Sequence[Any]]) -> dict[str, dict[str, float]]:
    """Question key -> its best-of-k metrics, from per-candidate judge entries.

    A question missing one of its candidates (``--limit`` cut it) is left out.
    """
    scores: dict[str, dict[int, Optional[float]]] = defaultdict(dict)
    golds: dict[str, Sequence[Optional[float]]] = {}
    for key, index, score, gold in entries:
        scores[key][int(index)] = score
        golds[key] = gold
    return {
        key: question_metrics([got[i] for i in range(len(golds[key]))], list(golds[key]))
        for key, got in scores.items()
        if all(i in got for i in range(len(golds[key])))
    }


def _group_aggregation(metric: str) -> Callable[[Iterable[Sequence[Any]]], float]:
    def aggregate(items: Iterable[Sequence[Any]]) -> float:
        return nanmean(values[metric] for values in group_metrics(items).values())

    aggregate.__name__ = f"judge_{metric}"
    aggregate.__doc__ = f"Mean {metric} over the questions whose every candidate was rated."
    return aggregate


#: The judge task YAML names one aggregation per metric: ``utils.judge_<metric>``.
JUDGE_AGGREGATIONS: dict[str, Callable[[Iterable[Sequence[Any]]], float]] = {
    f"judge_{name}": _group_aggregation(name) for name in (*METRICS, "ungraded")
}

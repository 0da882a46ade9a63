"""Best-of-N on PersonalLLM: how good, for this user, is the response a model picks?

For one (user, prompt) the model scores the first N of the eight responses (fixed
dataset order) and picks the highest. Every number is an exact expectation, never a
sample: when several responses share the top score the pick is uniform among them,
and a comparison that ends level counts one half.

- ``bon_reward_nN``: the user's normalised reward of the pick;
- ``bon_regret_nN``: the user's best reward among the N, minus the pick's (0 = ideal);
- ``bon_win_random_nN``: chance the pick beats a uniformly random one of the N
  (ties half; any model that ignores the user scores 0.5 on average);
- ``bon_win_popular_nN``: chance the pick beats the response the population-average
  user would pick (ties half; 0.5 = no better than ignoring who the user is).

Scalar RMs score all eight choices of one document (``process_bon_scalar``). Judges
rate each response in its own document (``process_bon_judge``); those ratings are
put back together per (user, prompt) by the ``judge_bon_*`` aggregations, which skip
a group missing one of its first N responses (``--limit``). An unreadable rating
ranks below every readable one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from prb_tasks.replies.pointwise import parse_score

SIZES = (2, 4, 8)
FIELDS = ("reward", "regret", "win_random", "win_popular")
METRICS = tuple(f"bon_{field}_n{n}" for n in SIZES for field in FIELDS)
_NAN = float("nan")

@dataclass(frozen=True)
class BonOutcome:
    """Expected result of one Best-of-N pick (see module docstring)."""

    reward: float
    regret: float
    win_random: float
    win_popular: float


def top_indices(scores: Sequence[Optional[float]]) -> list[int]:
    """Indices sharing the highest score; None ranks lowest (all None: every index)."""
    known = [s for s in scores if s is not None]
    if not known:
        return list(range(len(scores)))
    best = max(known)
    return [i for i, s in enumerate(scores) if s is not None and s == best]


def _beats(x: float, y: float) -> float:
    return 1.0 if x > y else 0.5 if x == y else 0.0


def bon_outcome(scores: Sequence[Optional[float]], user_rewards: Sequence[float],
                popular_rewards: Sequence[float], n: int) -> BonOutcome:
    """Score a pick among the first ``n`` responses.

    Args:
        scores: the model's score of each response (None: no score), at least ``n``.
        user_rewards: the user's reward of each response.
        popular_rewards: the population-average user's reward of each response.
        n: how many of the first responses compete.
    """
    if len(scores) < n or len(user_rewards) < n or len(popular_rewards) < n:
        raise ValueError(f"Best-of-{n} needs {n} scores and rewards")
    rewards = [float(r) for r in user_rewards[:n]]
    mine = top_indices(list(scores[:n]))
    theirs = top_indices([float(p) for p in popular_rewards[:n]])
    reward = sum(rewards[i] for i in mine) / len(mine)
    win_random = sum(_beats(rewards[i], rewards[j]) for i in mine for j in range(n)) / (len(mine) * n)
    win_popular = sum(_beats(rewards[i], rewards[j]) for i in mine for j in theirs) / (len(mine) * len(theirs))
    return BonOutcome(reward, max(rewards) - reward, win_random, win_popular)


def _metrics(scores: Sequence[Optional[float]], doc: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for n in SIZES:
        outcome = bon_outcome(scores, doc["user_rewards"], doc["popular_rewards"], n)
        for field in FIELDS:
            out[f"bon_{field}_n{n}"] = getattr(outcome, field)
    return out


def process_bon_scalar(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
    """Best-of-N metrics of one (user, prompt) from the RM's reward of each of the eight choices."""
    rewards = [float(r[0]) if isinstance(r, (tuple, list)) else float(r) for r in results]
    if len(rewards) != len(doc["choices"]):
        raise ValueError(f"expected {len(doc['choices'])} rewards, got {len(rewards)}")
    return _metrics(rewards, doc)


def process_bon_judge(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One response's rating; the Best-of-N metrics are assembled per group on aggregation."""
    reading = parse_score(results[0] if results else None)
    entry = (doc["group_key"], int(doc["response_index"]), reading.value,
             tuple(doc["user_rewards"]), tuple(doc["popular_rewards"]))
    out: dict[str, Any] = {name: entry for name in METRICS}
    out["parse_fail"] = int(reading.outcome == "unparsed")
    out["error_rate"] = int(reading.outcome == "error")
    out["skip_rate"] = int(reading.outcome == "skipped")
    return out


def _group_aggregation(field: str, n: int) -> Callable[[Iterable[tuple]], float]:
    def aggregate(items: Iterable[tuple]) -> float:
        scores: dict[str, dict[int, Optional[float]]] = defaultdict(dict)
        rewards: dict[str, tuple[Sequence[float], Sequence[float]]] = {}
        for key, index, score, user, popular in items:
            scores[key][int(index)] = score
            rewards[key] = (user, popular)
        values = [
            getattr(bon_outcome([got[i] for i in range(n)], *rewards[key], n), field)
            for key, got in scores.items()
            if all(i in got for i in range(n))
        ]
        return sum(values) / len(values) if values else _NAN

    aggregate.__name__ = f"judge_bon_{field}_n{n}"
    aggregate.__doc__ = f"Mean {field} of Best-of-{n} over complete (user, prompt) groups."
    return aggregate


# The task YAML names one aggregation per metric.
judge_bon_reward_n2 = _group_aggregation("reward", 2)
judge_bon_regret_n2 = _group_aggregation("regret", 2)
judge_bon_win_random_n2 = _group_aggregation("win_random", 2)
judge_bon_win_popular_n2 = _group_aggregation("win_popular", 2)
judge_bon_reward_n4 = _group_aggregation("reward", 4)
judge_bon_regret_n4 = _group_aggregation("regret", 4)
judge_bon_win_random_n4 = _group_aggregation("win_random", 4)
judge_bon_win_popular_n4 = _group_aggregation("win_popular", 4)
judge_bon_reward_n8 = _group_aggregation("reward", 8)
judge_bon_regret_n8 = _group_aggregation("regret", 8)
judge_bon_win_random_n8 = _group_aggregation("win_random", 8)
judge_bon_win_popular_n8 = _group_aggregation("win_popular", 8)

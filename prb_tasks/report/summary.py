"""Per-model numbers: accuracy with intervals, breakdowns, position and length bias, cost.

Computed from the per-pair arrays of an :class:`~prb_tasks.report.outcomes.Entry`; a
run without sample logs falls back to the metrics of its results file (no intervals).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from prb_tasks.report.outcomes import Entry, design_of
from prb_tasks.stats.pairs import Interval
from prb_tasks.stats.resampling import Design

BREAKDOWN_FIELDS = (("category", "category"), ("user", "user_id"), ("tags", "tag"))


@dataclass
class Group:
    """Accuracy on the pairs that share one value of a field (a subset, a category...)."""

    value: str
    pairs: int
    acc: float
    low: float | None = None
    high: float | None = None


@dataclass
class Cost:
    """What a judge run cost, from ``prb-judge``'s usage file (None: not known)."""

    usd_per_1k_pairs: float | None = None
    partial: bool = False
    input_tokens_per_call: float | None = None
    output_tokens_per_call: float | None = None
    latency_p50: float | None = None
    latency_p90: float | None = None
    shared_run: bool = False
    # Share of input tokens the provider read from its prompt cache (None: usage file predates it).
    prompt_cached_share: float | None = None


@dataclass
class Summary:
    """Everything the report says about one model on one task family.

    ``resampled`` says what the intervals resampled and how many (``36 pairs``,
    ``12 users``); ``acc_user`` is each user's accuracy averaged over users (data with
    users only); ``double_game`` is JudgeBench's double-game score over the pairs judged
    in both orders, overall and per subset.
    """

    id: str
    label: str
    kind: str
    backend: str
    family: str
    setting: str
    source: str
    variant: str | None
    logged: bool
    path: str
    limit: float | None
    pairs: int | None
    judgments: int | None
    acc: Interval | None
    acc_macro: Interval | None
    subsets: list[Group] = field(default_factory=list)
    breakdowns: dict[str, list[Group]] = field(default_factory=dict)
    metrics: dict[str, float | None] = field(default_factory=dict)
    cost: Cost = field(default_factory=Cost)
    resampled: str | None = None
    acc_user: Interval | None = None
    double_game: Interval | None = None
    double_game_subsets: list[Group] = field(default_factory=list)


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def _per_subset(design: Design, values: np.ndarray, measured: np.ndarray | None = None) -> list[Group]:
    """Each subset's mean of ``values`` with its interval (over the pairs ``measured``)."""
    keep = np.ones(len(values), dtype=bool) if measured is None else measured
    groups = []
    for name in dict.fromkeys(design.subsets.tolist()):
        mask = keep & (design.subsets == name)
        interval = design.only(mask).interval(values[mask]) if mask.any() else None
        if interval is not None:
            groups.append(Group(name, int(mask.sum()), interval.value, interval.low, interval.high))
    return groups


def double_game_pairs(entry: Entry) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: whether it was judged in both orders, and whether its two votes net above
    zero (JudgeBench's double game: +1 per order naming the chosen answer, -1 per order
    naming the rejected one, 0 without a verdict)."""
    votes = np.where(entry.j_pick == 1, 1.0, np.where(entry.j_pick == 0, -1.0, 0.0))
    net = np.bincount(entry.j_pair, weights=votes, minlength=len(entry.keys))
    both = np.bincount(entry.j_pair, minlength=len(entry.keys)) == 2
    return both, (net > 0).astype(float)


def _breakdowns(entry: Entry) -> dict[str, list[Group]]:
    out: dict[str, list[Group]] = {}
    for attr, name in BREAKDOWN_FIELDS:
        values: list[Any] = getattr(entry, attr)
        members: dict[str, list[int]] = defaultdict(list)
        for i, value in enumerate(values):
            for item in (value if isinstance(value, tuple) else (value,)):
                if item is not None and item != "":
                    members[str(item)].append(i)
        if members:
            groups = [Group(v, len(ix), float(entry.score[np.array(ix)].mean())) for v, ix in members.items()]
            out[name] = sorted(groups, key=lambda g: (-g.pairs, g.value))
    return out


def _judge_metrics(entry: Entry) -> dict[str, float | None]:
    pos = np.array([p or "" for p in entry.j_pos])
    letters = np.array([x or "" for x in entry.j_letter])
    outcomes = np.array(entry.j_outcome)
    correct = entry.j_correct
    acc_a, acc_b = _mean(correct[pos == "A"]), _mean(correct[pos == "B"])
    parsed = letters != ""
    counts = np.bincount(entry.j_pair, minlength=len(entry.keys))
    metrics: dict[str, float | None] = {
        "acc_pos_a": acc_a,
        "acc_pos_b": acc_b,
        "pos_bias": None if acc_a is None or acc_b is None else abs(acc_a - acc_b),
        "pos_a_rate": _mean((letters[parsed] == "A").astype(float)),
        "predicted_a": float(np.sum(letters == "A")),
        "predicted_b": float(np.sum(letters == "B")),
        "parse_fail": _mean((outcomes == "unparsed").astype(float)),
        "error_rate": _mean((outcomes == "error").astype(float)),
        "skip_rate": _mean((outcomes == "skipped").astype(float)),
        "acc_pair": None,
        "consistency": None,
    }
    twice = np.flatnonzero(counts == 2)
    if len(twice):
        order = np.argsort(entry.j_pair, kind="stable")
        first = np.searchsorted(entry.j_pair[order], twice)
        a, b = order[first], order[first + 1]
        metrics["acc_pair"] = float(np.mean(correct[a] * correct[b]))
        picks = entry.j_pick
        metrics["consistency"] = float(np.mean((picks[a] == picks[b]) & (picks[a] >= 0)))
    return metrics


def _scalar_metrics(entry: Entry) -> dict[str, float | None]:
    gap = entry.s_chosen - entry.s_rejected
    return {
        "tie_rate": _mean((gap == 0).astype(float)),
        "mean_chosen": _mean(entry.s_chosen),
        "mean_rejected": _mean(entry.s_rejected),
        "mean_gap": _mean(gap),
    }


def _length_metrics(entry: Entry) -> dict[str, float | None]:
    w_c = entry.w_chosen[entry.j_pair]
    w_r = entry.w_rejected[entry.j_pair]
    known = ~(np.isnan(w_c) | np.isnan(w_r)) & (w_c != w_r)
    picked = known & (entry.j_pick >= 0)
    chosen_longer = w_c > w_r
    return {
        "picks_longer": _mean(((entry.j_pick == 1) == chosen_longer)[picked].astype(float)),
        "acc_chosen_longer": _mean(entry.j_correct[known & chosen_longer]),
        "acc_chosen_shorter": _mean(entry.j_correct[known & ~chosen_longer]),
        "length_pairs": float(np.sum(known)),
    }


def _cost(entry: Entry, pairs: int | None, judgments: int | None) -> Cost:
    usage = entry.run.usage
    if not usage or entry.kind != "judge" or not pairs or not judgments:
        return Cost()
    total_judgments = usage.get("judgments") or 0
    share = judgments / total_judgments if total_judgments else 1.0
    spent = usage.get("cost") or {}
    cached = usage.get("cost_of_cache_hits_when_made") or {}
    usd = float(spent.get("usd") or 0.0) + float(cached.get("usd") or 0.0)
    unpriced = int(spent.get("unpriced_calls") or 0) + int(cached.get("unpriced_calls") or 0)
    calls = usage.get("requests_ok") or 0
    tokens = usage.get("tokens") or {}
    latency = usage.get("latency_s") or {}
    priced = not (unpriced and usd == 0.0)
    return Cost(
        usd_per_1k_pairs=usd * share / pairs * 1000 if priced else None,
        partial=bool(unpriced) and priced,
        input_tokens_per_call=tokens.get("input", 0) / calls if calls else None,
        output_tokens_per_call=tokens.get("output", 0) / calls if calls else None,
        latency_p50=latency.get("p50"),
        latency_p90=latency.get("p90"),
        shared_run=share < 1.0,
        prompt_cached_share=(tokens["cached_input"] / tokens["input"]
                             if isinstance(tokens.get("cached_input"), int) and tokens.get("input") else None),
    )


def _value(metrics: dict[str, Any], name: str) -> float | None:
    value = metrics.get(f"{name},none")
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def _from_results(entry: Entry) -> Summary:
    """What the results file alone says (a run without ``--log_samples``)."""
    results = entry.run.results
    own = results.get(entry.family.name, {})
    acc, macro = _value(own, "acc"), _value(own, "acc_macro")
    subsets = []
    for task in entry.family.subtasks:
        value = _value(results.get(task, {}), "acc")
        if value is not None:
            alias = str(results.get(task, {}).get("alias", task)).strip(" -")
            subsets.append(Group(alias, int(results.get(task, {}).get("sample_len") or 0), value))
    names = ("acc_pair", "consistency", "pos_a_rate", "acc_pos_a", "acc_pos_b", "pos_bias", "parse_fail",
             "error_rate", "skip_rate") if entry.kind == "judge" else ("tie_rate",)
    return Summary(
        entry.id, entry.label, entry.kind, entry.run.backend, entry.family.name, entry.setting, entry.source,
        entry.variant, False, str(entry.run.path), entry.run.limit, None, None,
        None if acc is None else Interval(acc, math.nan, math.nan),
        None if macro is None else Interval(macro, math.nan, math.nan),
        subsets, {}, {n: _value(own, n) for n in names},
    )


def summarize(entry: Entry) -> Summary:
    """The per-model summary of one entry."""
    if not entry.logged:
        return _from_results(entry)
    design = design_of(entry)
    metrics = _judge_metrics(entry) if entry.kind == "judge" else _scalar_metrics(entry)
    metrics.update(_length_metrics(entry))
    pairs, judgments = len(entry.keys), len(entry.j_pair)
    summary = Summary(
        entry.id, entry.label, entry.kind, entry.run.backend, entry.family.name, entry.setting, entry.source,
        entry.variant, True, str(entry.run.path), entry.run.limit, pairs, judgments,
        design.interval(entry.score), design.interval(entry.score, macro=True), _per_subset(design, entry.score),
        _breakdowns(entry), metrics, _cost(entry, pairs, judgments),
        resampled=design.label(), acc_user=design.user_macro(entry.score),
    )
    if entry.kind == "judge":
        both, wins = double_game_pairs(entry)
        if both.any():
            summary.double_game = design.only(both).interval(wins[both])
            summary.double_game_subsets = _per_subset(design, wins, both)
            metrics["double_game"] = summary.double_game.value if summary.double_game else None
    return summary

"""Statistics recomputed from sample logs: pair-clustered bootstrap and length bias.

The two judgments of a pair (both orders) are not independent, so confidence
intervals resample whole pairs, within each subset (stratified), as the harness's
own standard errors cannot.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from prb_tasks.scoring.verdict import parse_verdict


def pair_scores(samples: list[dict[str, Any]]) -> np.ndarray:
    """Mean ``acc`` per pair (0, 0.5 or 1 with both orders), in first-seen order."""
    by_pair: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        doc = s.get("doc") or {}
        key = doc.get("pair_key") or f"doc{s.get('doc_id')}"
        by_pair[key].append(float(s["acc"]))
    return np.array([sum(v) / len(v) for v in by_pair.values()], dtype=float)


def bootstrap_ci(strata: list[np.ndarray], iters: int = 2000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of the pooled mean, resampling pairs within each stratum.

    Args:
        strata: per-subset arrays of per-pair scores.
        iters: bootstrap draws.
        seed: generator seed, so a report is reproducible.
        level: coverage of the interval.
    """
    strata = [s for s in strata if len(s)]
    if not strata:
        return None
    rng = np.random.default_rng(seed)
    total = sum(len(s) for s in strata)
    means = np.zeros(iters)
    for s in strata:
        picks = rng.integers(0, len(s), size=(iters, len(s)))
        means += s[picks].sum(axis=1)
    means /= total
    tail = (1.0 - level) / 2.0
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def longer_preference(samples: list[dict[str, Any]]) -> float | None:
    """Share of parsed verdicts that picked the longer response (judge tasks only).

    0.5 means no length preference on length-balanced data; ties in length are left out.
    """
    picked_longer = 0
    counted = 0
    for s in samples:
        doc = s.get("doc") or {}
        if "words_chosen" not in doc or doc["words_chosen"] == doc["words_rejected"]:
            continue
        completion = (s.get("filtered_resps") or s.get("resps") or [None])[0]
        while isinstance(completion, list) and completion:
            completion = completion[0]
        verdict = parse_verdict(completion)
        if verdict.letter is None:
            continue
        picked_chosen = verdict.letter == doc["chosen_position"]
        chosen_longer = doc["words_chosen"] > doc["words_rejected"]
        picked_longer += int(picked_chosen == chosen_longer)
        counted += 1
    return picked_longer / counted if counted else None

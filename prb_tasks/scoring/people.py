"""Lines under the compact table for the tasks of real people (PRISM, Community Alignment),
from the run's logged samples (``--log_samples``): accuracy by language and by country (over
judgments, as the table's ``acc``: the groups' accuracies average to the table's, whatever
``--limit`` cut), and the majority baseline (what most *other* people chose on the same pair)
beside the model on the pairs where others answered (a judge's two orders of a pair: one pair,
their mean), so a reader sees whether a model personalizes or predicts the crowd.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from prb_tasks.scoring.majority import majority_credits

#: The compact table's width; a line lists the largest groups that fit.
WIDTH = 120


def _judgments(samples: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float]]:
    """(document, acc) per logged judgment of a real people's pair (a judge's two orders: two)."""
    out = []
    for sample in samples:
        doc = sample.get("doc")
        if isinstance(doc, dict) and "item" in doc and isinstance(sample.get("acc"), (int, float)):
            out.append((doc, float(sample["acc"])))
    return out


def _pairs(judgments: list[tuple[dict[str, Any], float]]) -> list[tuple[dict[str, Any], float]]:
    """(document, credit) per pair: a judge's two orders of one pair count as one, their mean."""
    by_pair: dict[str, list[float]] = defaultdict(list)
    docs: dict[str, dict[str, Any]] = {}
    for doc, acc in judgments:
        key = str(doc.get("pair_key"))
        by_pair[key].append(acc)
        docs.setdefault(key, doc)
    return [(docs[key], sum(v) / len(v)) for key, v in by_pair.items()]


def _fit(head: str, cells: list[str]) -> str:
    shown: list[str] = []
    for i, cell in enumerate(cells):
        more = f", +{len(cells) - i - 1} more" if i < len(cells) - 1 else ""
        if len(head + ", ".join([*shown, cell]) + more) > WIDTH:
            return head + ", ".join(shown) + f", +{len(cells) - i} more"
        shown.append(cell)
    return head + ", ".join(shown)


def _majority(pairs: list[tuple[dict[str, Any], float]]) -> tuple[float, float, int] | None:
    """(majority's accuracy, the model's, pairs) where other people answered the same pair."""
    credits = majority_credits([(str(doc["item"]), str(doc.get("user_id")), str(doc.get("chosen_hash")))
                                for doc, _ in pairs])
    crowd = [c for c in credits if c is not None]
    model = [credit for (_, credit), c in zip(pairs, credits) if c is not None]
    if not crowd:
        return None
    return sum(crowd) / len(crowd), sum(model) / len(model), len(crowd)


def people_lines(name: str, samples: list[dict[str, Any]]) -> list[str]:
    """The lines for one task's samples; none when its documents are not real people's.

    Args:
        name: the task as the table shows it.
        samples: the task's logged samples.
    """
    judgments = _judgments(samples)
    if not judgments:
        return []
    pairs = _pairs(judgments)
    lines = []
    for field in ("language", "country", "conversation_type", "cohort"):
        # Over judgments, as the table's acc counts (under --limit a judge may have run one order of
        # a pair only); the pairs they belong to in brackets.
        groups: dict[str, list[float]] = defaultdict(list)
        keys: dict[str, set[str]] = defaultdict(set)
        for doc, acc in judgments:
            if doc.get(field):
                groups[str(doc[field])].append(acc)
                keys[str(doc[field])].add(str(doc.get("pair_key")))
        if groups:
            cells = [f"{g[:24]} {100 * sum(v) / len(v):.1f} ({len(keys[g])})"
                     for g, v in sorted(groups.items(), key=lambda kv: -len(keys[kv[0]]))]
            label = field.replace("_", " ")
            lines.append(_fit(f"{name} by {label}, acc % as in the table (pairs): ", cells))
    found = _majority(pairs)
    if found is None:
        lines.append(f"{name}: no pair was answered by another person, so there is no majority baseline")
    else:
        crowd, model, n = found
        lines.append(f"{name}: majority of other people {100 * crowd:.1f}%, this model {100 * model:.1f}% "
                     f"on the {n} pairs others answered")
    return lines

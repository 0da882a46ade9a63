"""Lines under the compact table for the tasks of real people (PRISM, Community Alignment),
from the run's logged samples (``--log_samples``): accuracy by language and by country (over
judgments, as the table's ``acc``: the groups' accuracies average to the table's, whatever
``--limit`` cut; by cohort also as a mean over people, as LoRe reports it), and the majority
baseline (what most *other* people chose on the same pair) beside the model on the pairs where
others answered (a judge's two orders of a pair: one pair, their mean), so a reader sees whether
a model personalizes or predicts the crowd.
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


def _fit(head: str, cells: list[str], most: int = 2) -> list[str]:
    """``head`` and the cells, wrapped onto at most ``most`` lines of :data:`WIDTH` (the later ones indented),
    the last naming how many cells did not fit: a few groups (PRISM's three conversation types) are all
    shown, a long tail (countries) is cut."""
    lines: list[str] = []
    line, shown = head, 0
    for i, cell in enumerate(cells):
        last = len(lines) == most - 1
        more = f", +{len(cells) - i - 1} more" if last and i < len(cells) - 1 else ""
        joined = line + (", " if shown else "") + cell
        if len(joined + more) <= WIDTH:
            line, shown = joined, shown + 1
            continue
        if last or not shown:
            lines.append(line + (", " if shown else "") + f"+{len(cells) - i} more")
            return lines
        lines.append(line + ",")
        line, shown = "  " + cell, 1
        if len(lines) == most - 1 and i < len(cells) - 1 and len(line + f", +{len(cells) - i - 1} more") > WIDTH:
            lines.append(line + f", +{len(cells) - i - 1} more")
            return lines
    lines.append(line)
    return lines


def _majority(pairs: list[tuple[dict[str, Any], float]]) -> tuple[float, float, int] | None:
    """(majority's accuracy, the model's, pairs) where other people answered the same pair."""
    credits = majority_credits([(str(doc["item"]), str(doc.get("user_id")), str(doc.get("chosen_hash")))
                                for doc, _ in pairs])
    crowd = [c for c in credits if c is not None]
    model = [credit for (_, credit), c in zip(pairs, credits) if c is not None]
    if not crowd:
        return None
    return sum(crowd) / len(crowd), sum(model) / len(model), len(crowd)


def _people_means(judgments: list[tuple[dict[str, Any], float]], field: str) -> dict[str, list[float]]:
    """Group -> each person's accuracy over their judgments in that group (the group's people)."""
    by_person: dict[tuple[str, str], list[float]] = defaultdict(list)
    for doc, acc in judgments:
        if doc.get(field):
            by_person[(str(doc[field]), str(doc.get("user_id")))].append(acc)
    groups: dict[str, list[float]] = defaultdict(list)
    for (group, _), values in by_person.items():
        groups[group].append(sum(values) / len(values))
    return dict(groups)


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
    lines: list[str] = []
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
            lines.extend(_fit(f"{name} by {label}, acc % as in the table (pairs): ", cells))
    cohorts = _people_means(judgments, "cohort")
    if cohorts:
        # LoRe reports each cohort's accuracy as a mean over people (utils.eval_multiple: a person's share
        # of pairs where the chosen answer scores strictly higher, then the mean of those shares), not
        # over pairs: the line above and this one differ whenever people answered different numbers of pairs.
        cells = [f"{g[:24]} {100 * sum(v) / len(v):.1f} ({len(v)})"
                 for g, v in sorted(cohorts.items(), key=lambda kv: -len(kv[1]))]
        lines.extend(_fit(f"{name} by cohort, mean over people as LoRe reports, acc % (people): ", cells))
    found = _majority(pairs)
    if found is None:
        lines.append(f"{name}: no pair was answered by another person, so there is no majority baseline")
    else:
        crowd, model, n = found
        lines.append(f"{name}: majority of other people {100 * crowd:.1f}%, this model {100 * model:.1f}% "
                     f"on the {n} pairs others answered")
    return lines

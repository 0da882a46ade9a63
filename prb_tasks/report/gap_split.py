"""Where quality is equal: judges' position consistency and position bias split by a quality gap.

Position bias grows as the two answers' general quality draws level (Shi et al., ACL 2025),
and Personalized RewardBench's pairs are built to be level. Each family's proxy for the gap
between a pair's two answers in general quality:

- PRISM: the rater's score difference (``rating_gap`` on each document);
- PersonalLLM: the user's reward difference (``reward_gap``);
- Personalized RewardBench (and any data without one): a user-blind judge's own margin,
  ``|2 s - 1|`` of its soft verdict ``s`` (:mod:`prb_tasks.scoring.soft`): the judge in the
  section's "question only" setting run with ``logprobs=`` (the first, by label, if several).

A section's judges are compared on its pairs split at the proxy's median: *near-equal*
(gap at or below the median) and *clear* (above). Per half: ``consistency`` (pairs, both
orders logged, where both orders preferred the same answer) and ``pos_bias`` (|accuracy with
the chosen answer shown as A - with it shown as B|, over judgments). RewardBench 2's judge
rates one response at a time (no positions) and is not split.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from prb_tasks.replies.soft_verdict import read_mark
from prb_tasks.report.build import Section
from prb_tasks.report.charts_soft import entry_soft_pairs
from prb_tasks.report.outcomes import Entry

#: Document fields holding a family's quality gap, and how to name them.
GAP_FIELDS = {"rating_gap": "PRISM's rating gap", "reward_gap": "PersonalLLM's reward gap"}
BLIND_SETTING = "question"


@dataclass(frozen=True)
class Half:
    """One judge's numbers on one half of the pairs.

    Attributes:
        pairs: pairs with both orders logged (consistency's denominator).
        consistency: share of them preferred the same way in both orders (None: no pair).
        pos_bias: |acc with chosen shown as A - acc with chosen shown as B| (None: a position unseen).
    """

    pairs: int
    consistency: float | None
    pos_bias: float | None


@dataclass(frozen=True)
class GapSplit:
    """A section's split: what the gap is, where it was cut, and each judge's two halves."""

    proxy: str
    cut: float
    near: int
    clear: int
    rows: list[tuple[str, Half, Half]]


def _doc_gaps(entry: Entry) -> tuple[dict[str, float], str] | None:
    for name, what in GAP_FIELDS.items():
        gaps = {}
        for key, doc in zip(entry.keys, entry.docs):
            value = doc.get(name) if isinstance(doc, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                gaps[key] = abs(float(value))
        if gaps:
            return gaps, what
    return None


def _blind_margins(section: Section) -> tuple[dict[str, float], str] | None:
    if section.setting != BLIND_SETTING:
        return None
    for entry in sorted(section.entries, key=lambda e: e.label):
        if entry.kind != "judge" or not entry_soft_pairs(entry)[0]:
            continue
        by_pair: dict[str, list[float]] = defaultdict(list)
        for pair, position, text in zip(entry.j_pair, entry.j_pos, entry.j_text):
            soft = read_mark(text)
            if soft is not None:
                by_pair[entry.keys[int(pair)]].append(soft.p_first if position == "A" else 1 - soft.p_first)
        # s: the pair's soft score (its two orders' mean); the margin is how far it is from a tie.
        margins = {k: abs(2 * (sum(v) / 2) - 1) for k, v in by_pair.items() if len(v) == 2}
        if margins:
            return margins, f"the user-blind judge {entry.label}'s own soft margin |2s - 1|"
    return None


def _half(entry: Entry, keys: set[str]) -> Half:
    preferred: dict[str, list[str | None]] = defaultdict(list)
    right: dict[str, list[float]] = {"A": [], "B": []}
    for pair, position, letter, correct in zip(entry.j_pair, entry.j_pos, entry.j_letter, entry.j_correct):
        key = entry.keys[int(pair)]
        if key not in keys or position not in ("A", "B"):
            continue
        preferred[key].append(None if letter is None else "chosen" if letter == position else "rejected")
        right[str(position)].append(float(correct))
    both = [v for v in preferred.values() if len(v) == 2]
    consistency = sum(v[0] is not None and v[0] == v[1] for v in both) / len(both) if both else None
    bias = (abs(sum(right["A"]) / len(right["A"]) - sum(right["B"]) / len(right["B"]))
            if right["A"] and right["B"] else None)
    return Half(len(both), consistency, bias)


def gap_split(section: Section) -> GapSplit | None:
    """The section's judges split by the quality-gap proxy; None without judges in both orders or a proxy."""
    judges = [e for e in section.entries if e.kind == "judge" and e.logged and "B" in e.j_pos]
    if not judges:
        return None
    found = next((g for g in (_doc_gaps(e) for e in judges) if g is not None), None) or _blind_margins(section)
    if found is None:
        return None
    gaps, proxy = found
    cut = statistics.median(gaps.values())
    near = {k for k, g in gaps.items() if g <= cut}
    clear = set(gaps) - near
    if not near or not clear:
        return None
    rows = [(e.label, _half(e, near), _half(e, clear)) for e in judges]
    return GapSplit(proxy, cut, len(near), len(clear), rows)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def gap_lines(section: Section) -> list[str]:
    """Sentences for ``prb compare``'s terminal output (wrapped by the caller); [] without a split."""
    split = gap_split(section)
    if split is None:
        return []
    lines = [f"where quality is equal ({split.proxy}; near-equal: at or below its median {split.cut:.3g}, "
             f"{split.near} pairs; clear: above, {split.clear} pairs):"]
    for label, near, clear in split.rows:
        lines.append(f"  {label}: consistency % near-equal {_pct(near.consistency)} vs clear {_pct(clear.consistency)}"
                     f"; pos_bias % near-equal {_pct(near.pos_bias)} vs clear {_pct(clear.pos_bias)}")
    return lines


def gap_table_rows(section: Section) -> tuple[str, list[str], list[list[str]]] | None:
    """Title, header and rows of the report's table (None without a split)."""
    split = gap_split(section)
    if split is None:
        return None
    title = (f"Where quality is equal: judges split by {split.proxy} at its median {split.cut:.3g} "
             f"(near-equal {split.near} pairs, clear {split.clear})")
    head = ["model", "consistency % near-equal", "consistency % clear", "pos_bias % near-equal", "pos_bias % clear"]
    rows = [[label, _pct(near.consistency), _pct(clear.consistency), _pct(near.pos_bias), _pct(clear.pos_bias)]
            for label, near, clear in split.rows]
    return title, head, rows

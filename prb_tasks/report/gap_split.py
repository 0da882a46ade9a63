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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from prb_tasks.replies.soft_verdict import read_mark
from prb_tasks.report.build import Section

#: Document fields holding a family's quality gap, and how to name them.
GAP_FIELDS = {"rating_gap": "PRISM's rating gap", "reward_gap": "PersonalLLM's reward gap"}
BLIND_SETTING = "question"


class Judgments(Protocol):
    """What the split reads of one judge: :class:`~prb_tasks.report.outcomes.Entry` has it, and so
    does :class:`LoggedJudgments` (a ``prb eval`` run's samples)."""

    label: str
    keys: list[str]
    docs: list[dict[str, Any]]
    j_pair: Any
    j_pos: list[str | None]
    j_letter: list[str | None]
    j_correct: Any
    j_text: list[str]


@dataclass
class LoggedJudgments:
    """One judge's judgments read from lm-eval's logged samples (for ``prb eval``'s table)."""

    label: str
    keys: list[str] = field(default_factory=list)
    docs: list[dict[str, Any]] = field(default_factory=list)
    j_pair: list[int] = field(default_factory=list)
    j_pos: list[str | None] = field(default_factory=list)
    j_letter: list[str | None] = field(default_factory=list)
    j_correct: list[float] = field(default_factory=list)
    j_text: list[str] = field(default_factory=list)

    @classmethod
    def from_samples(cls, label: str, samples: Sequence[dict[str, Any]]) -> LoggedJudgments:
        """Read both-order judge samples (``doc``, ``filtered_resps``, ``pos_a_rate``, ``acc``).

        Args:
            label: the name to show.
            samples: the samples of one or more tasks.
        """
        from prb_tasks.replies.verdict import parse_verdict

        out = cls(label)
        slots: dict[str, int] = {}
        for sample in samples:
            doc = sample.get("doc")
            if not isinstance(doc, dict) or doc.get("chosen_position") not in ("A", "B"):
                continue
            key = str(doc.get("pair_key") or sample.get("doc_id"))
            if key not in slots:
                slots[key] = len(out.keys)
                out.keys.append(key)
                out.docs.append(doc)
            resps = sample.get("filtered_resps") or [""]
            text = resps[0] if isinstance(resps[0], str) else ""
            out.j_pair.append(slots[key])
            out.j_pos.append(doc["chosen_position"])
            out.j_letter.append(parse_verdict(text).letter)
            acc = sample.get("acc")
            out.j_correct.append(float(acc) if isinstance(acc, (int, float)) else 0.0)
            out.j_text.append(text)
        return out


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


def _doc_gaps(entry: Judgments) -> tuple[dict[str, float], str] | None:
    for name, what in GAP_FIELDS.items():
        gaps = {}
        for key, doc in zip(entry.keys, entry.docs):
            value = doc.get(name) if isinstance(doc, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                gaps[key] = abs(float(value))
        if gaps:
            return gaps, what
    return None


def _soft_margins(entry: Judgments) -> dict[str, float]:
    """Each pair's margin ``|2s - 1|`` from a judge's soft verdicts in both orders."""
    by_pair: dict[str, list[float]] = defaultdict(list)
    for pair, position, text in zip(entry.j_pair, entry.j_pos, entry.j_text):
        soft = read_mark(text)
        if soft is not None:
            by_pair[entry.keys[int(pair)]].append(soft.p_first if position == "A" else 1 - soft.p_first)
    # s: the pair's soft score (its two orders' mean); the margin is how far it is from a tie.
    return {k: abs(2 * (sum(v) / 2) - 1) for k, v in by_pair.items() if len(v) == 2}


def _blind_margins(section: Section) -> tuple[dict[str, float], str] | None:
    if section.setting != BLIND_SETTING:
        return None
    for entry in sorted(section.entries, key=lambda e: e.label):
        margins = _soft_margins(entry) if entry.kind == "judge" and entry.logged else {}
        if margins:
            return margins, f"the user-blind judge {entry.label}'s own soft margin |2s - 1|"
    return None


def _half(entry: Judgments, keys: set[str]) -> Half:
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
    return _split(judges, *found)


def _split(judges: Sequence[Judgments], gaps: dict[str, float], proxy: str) -> GapSplit | None:
    cut = statistics.median(gaps.values())
    near = {k for k, g in gaps.items() if g <= cut}
    clear = set(gaps) - near
    if not near or not clear:
        return None
    rows = [(e.label, _half(e, near), _half(e, clear)) for e in judges]
    return GapSplit(proxy, cut, len(near), len(clear), rows)


def eval_gap_lines(name: str, samples: Sequence[dict[str, Any]], user_blind: bool) -> list[str]:
    """``prb eval``'s lines for one row of its table (needs ``--log_samples``); [] without a proxy.

    Args:
        name: the row as the table shows it.
        samples: the logged samples of the row's tasks.
        user_blind: the tasks show the judge the question only, so its own soft margin may stand
            for the quality gap where the documents carry none.
    """
    judge = LoggedJudgments.from_samples(name, samples)
    if "B" not in judge.j_pos:
        return []
    found = _doc_gaps(judge)
    if found is None and user_blind:
        margins = _soft_margins(judge)
        found = (margins, "its own soft margin |2s - 1| as a user-blind judge") if margins else None
    split = _split([judge], *found) if found is not None else None
    if split is None:
        return []
    (_, near, clear), = split.rows
    return [f"{name} where quality is equal ({split.proxy}, at or below its median {split.cut:.3g}: {split.near} "
            f"pairs; above: {split.clear}): consistency % {_pct(near.consistency)} vs {_pct(clear.consistency)}, "
            f"pos_bias % {_pct(near.pos_bias)} vs {_pct(clear.pos_bias)}"]


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

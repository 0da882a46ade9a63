"""Sample logs -> what each model did on each pair, as flat arrays.

Everything downstream (statistics, comparisons, charts, the drill-down) works from
these arrays, recomputed from the logged samples rather than read from metric keys,
so runs made before a metric existed are reported the same way.

A *judgment* is one verdict (a judge sees a pair once per order) or one pair scored
by a scalar RM. A judgment's *pick* is 1 when it favoured the chosen response, 0 the
rejected one, -1 none (no verdict, a failed request, a tie of scores).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from prb_tasks.replies.verdict import parse_verdict
from prb_tasks.report.runs import Family, Run
from prb_tasks.stats.resampling import Design, design_for

OUTCOMES = ("verdict", "unparsed", "error", "skipped")


@dataclass
class Entry:
    """One model on one task family: the unit of every table row.

    Attributes:
        id: short stable id inside a report (``m1``, ``m2``...).
        label: model name shown to people.
        kind: ``judge`` or ``scalar``.
        run, family: where it was read from.
        setting: what the model was shown, as its tasks declare it: judges and RMs
            shown the same input share a setting and are compared with each other.
        variant: the docs' ``variant`` (``both``, ``official``, ``profile``, ...).
        keys, subset, category, user, tags: per pair (aligned arrays/lists).
        score: per pair, the share of its judgments that were right (0, 0.5 or 1).
        w_chosen, w_rejected: per pair, words in each response (NaN if unknown).
        docs: per pair, the first logged doc (texts for the drill-down).
        responses: per pair, (chosen, rejected) texts when the doc carries them.
        j_pair, j_pos, j_letter, j_outcome, j_pick, j_correct, j_text: per judgment.
        s_chosen, s_rejected: per pair, a scalar RM's two scores.
    """

    id: str
    label: str
    kind: str
    run: Run
    family: Family
    setting: str
    variant: str | None = None
    keys: list[str] = field(default_factory=list)
    subset: list[str] = field(default_factory=list)
    category: list[str | None] = field(default_factory=list)
    user: list[str | None] = field(default_factory=list)
    tags: list[tuple[str, ...]] = field(default_factory=list)
    score: np.ndarray = field(default_factory=lambda: np.zeros(0))
    w_chosen: np.ndarray = field(default_factory=lambda: np.zeros(0))
    w_rejected: np.ndarray = field(default_factory=lambda: np.zeros(0))
    docs: list[dict[str, Any]] = field(default_factory=list)
    responses: list[tuple[str, str] | None] = field(default_factory=list)
    j_pair: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    j_pos: list[str | None] = field(default_factory=list)
    j_letter: list[str | None] = field(default_factory=list)
    j_outcome: list[str] = field(default_factory=list)
    j_pick: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    j_correct: np.ndarray = field(default_factory=lambda: np.zeros(0))
    j_text: list[str] = field(default_factory=list)
    s_chosen: np.ndarray = field(default_factory=lambda: np.zeros(0))
    s_rejected: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def logged(self) -> bool:
        return bool(self.keys)

    @property
    def source(self) -> str:
        return self.family.source

    @property
    def index(self) -> dict[str, int]:
        """pair key -> position in the per-pair arrays."""
        cached = getattr(self, "_index", None)
        if cached is None:
            cached = {k: i for i, k in enumerate(self.keys)}
            self._index = cached
        return cached


def setting_of(family: str) -> str:
    """The setting a task (or group) named ``family`` declares, or the name itself when
    it declares none (it is then compared with nothing else)."""
    from prb_tasks.report.settings import declared

    return declared().get(family, family)


def _completion(sample: dict[str, Any]) -> str:
    value: Any = sample.get("filtered_resps")
    if not value:
        value = sample.get("resps")
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else ""


def _scores(sample: dict[str, Any]) -> list[float]:
    raw = sample.get("filtered_resps") or [r[0] if isinstance(r, list) and r else r for r in sample.get("resps") or []]
    scores = []
    for item in raw:
        value = item[0] if isinstance(item, (list, tuple)) else item
        scores.append(float(value))
    return scores


def _with_prompt(doc: dict[str, Any], sample: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its ``prompt``: prb's documents leave it to the request (``arguments``),
    so the samples file holds it once; the drill-down shows it when no data is at hand."""
    if "prompt" in doc:
        return doc
    args = sample.get("arguments")
    first = next(iter(args.values()), None) if isinstance(args, dict) else None
    context: Any = first.get("arg_0") if isinstance(first, dict) else None
    # prb-judge logs its chat as JSON text, lm-eval's chat backends wrap that text in a
    # list, and a task run without a chat template logs plain text.
    if isinstance(context, list) and len(context) == 1:
        context = context[0]
    if not isinstance(context, str):
        return doc
    try:
        messages = json.loads(context)
    except ValueError:
        return {**doc, "prompt": context}
    if isinstance(messages, list):
        users = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return {**doc, "prompt": users[-1]}
    return doc


def _target(sample: dict[str, Any]) -> int:
    try:
        return int(sample.get("target", 0))
    except (TypeError, ValueError):
        return 0


def _words(text: Any) -> float:
    return float(len(text.split())) if isinstance(text, str) else float("nan")


def _judge_sample(sample: dict[str, Any]) -> tuple[str | None, str, int, int, str]:
    """(letter, outcome, pick, correct, completion) of one judge sample."""
    doc = sample["doc"]
    text = _completion(sample)
    if "pos_a_rate" in sample and "parse_fail" in sample:
        letter = sample["pos_a_rate"] if sample["pos_a_rate"] in ("A", "B") else None
        outcome = ("unparsed" if sample.get("parse_fail") else "error" if sample.get("error_rate")
                   else "skipped" if sample.get("skip_rate") else "verdict")
        if letter is None and outcome == "verdict":
            outcome = "unparsed"
    else:  # logs from before these fields existed: parse again
        verdict = parse_verdict(text)
        letter, outcome = verdict.letter, verdict.outcome
    pick = -1 if letter is None else int(letter == doc.get("chosen_position"))
    correct = int(sample["acc"]) if isinstance(sample.get("acc"), (int, float)) else int(pick == 1)
    return letter, outcome, pick, correct, text


def build_entry(entry_id: str, label: str, run: Run, family: Family) -> Entry:
    """Read one family's samples into an :class:`Entry` (empty arrays without logs).

    Args:
        entry_id: id for the report.
        label: model label to show.
        run: the run holding ``family``.
        family: the task family to read.
    """
    entry = Entry(entry_id, label, family.kind, run, family, family.setting)
    if not family.logged:
        return entry
    index: dict[str, int] = {}
    w_c: list[float] = []
    w_r: list[float] = []
    j_pair: list[int] = []
    j_pick: list[int] = []
    j_correct: list[float] = []
    s_c: list[float] = []
    s_r: list[float] = []
    for task in family.subtasks:
        for sample in family.samples.get(task, []):
            doc = sample["doc"]
            key = str(doc.get("pair_key") or f"{task}/{sample.get('doc_id')}")
            if entry.variant is None and doc.get("variant"):
                entry.variant = str(doc["variant"])
            slot = index.get(key)
            if slot is None:
                slot = index[key] = len(entry.keys)
                entry.keys.append(key)
                entry.subset.append(str(doc.get("subset") or task))
                entry.category.append(doc.get("category"))
                entry.user.append(None if doc.get("user_id") is None else str(doc["user_id"]))
                tags = doc.get("tags") or ()
                entry.tags.append(tuple(str(t) for t in tags) if isinstance(tags, (list, tuple)) else (str(tags),))
                entry.docs.append(_with_prompt(doc, sample))
                if family.kind == "judge":
                    w_c.append(float(doc.get("words_chosen", float("nan"))))
                    w_r.append(float(doc.get("words_rejected", float("nan"))))
                    texts = (doc.get("chosen"), doc.get("rejected"))
                else:
                    choices = doc.get("choices") or [None, None]
                    target = _target(sample)
                    texts = (choices[target], choices[1 - target])
                    w_c.append(_words(texts[0]))
                    w_r.append(_words(texts[1]))
                entry.responses.append(texts if all(isinstance(t, str) for t in texts) else None)
            if family.kind == "judge":
                letter, outcome, pick, correct, text = _judge_sample(sample)
                entry.j_pos.append(doc.get("chosen_position"))
                entry.j_letter.append(letter)
                entry.j_outcome.append(outcome)
                entry.j_text.append(text)
            else:
                scores = _scores(sample)
                target = _target(sample)
                chosen, rejected = scores[target], scores[1 - target]
                s_c.append(chosen)
                s_r.append(rejected)
                pick = -1 if chosen == rejected else int(chosen > rejected)
                correct = int(sample["acc"]) if isinstance(sample.get("acc"), (int, float)) else int(pick == 1)
                entry.j_pos.append(None)
                entry.j_letter.append(None)
                entry.j_outcome.append("verdict" if pick >= 0 else "tie")
                entry.j_text.append("")
            j_pair.append(slot)
            j_pick.append(pick)
            j_correct.append(float(correct))
    entry.j_pair = np.array(j_pair, dtype=int)
    entry.j_pick = np.array(j_pick, dtype=int)
    entry.j_correct = np.array(j_correct, dtype=float)
    entry.w_chosen = np.array(w_c, dtype=float)
    entry.w_rejected = np.array(w_r, dtype=float)
    entry.s_chosen = np.array(s_c, dtype=float)
    entry.s_rejected = np.array(s_r, dtype=float)
    counts = np.bincount(entry.j_pair, minlength=len(entry.keys))
    entry.score = np.bincount(entry.j_pair, weights=entry.j_correct, minlength=len(entry.keys)) / np.maximum(counts, 1)
    return entry


def design_of(entry: Entry, keys: list[str] | None = None) -> Design:
    """The design of ``entry``'s pairs (all of them, or ``keys`` in that order).

    Args:
        entry: a model's per-pair outcomes; its ``user`` list says who each pair is from.
        keys: pair keys to keep, in the order of the values that will be passed.
    """
    index = entry.index
    rows = list(range(len(entry.keys))) if keys is None else [index[k] for k in keys]
    known = entry.user if len(entry.user) == len(entry.keys) else [None] * len(entry.keys)
    return design_for([entry.keys[i] for i in rows], [entry.subset[i] for i in rows], [known[i] for i in rows])

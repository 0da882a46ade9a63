"""Read a planner's reply into a list of aspects, and score plans.

Stage 1 of the planner (``personalized_rb_plan``) asks a model which aspects this
user will expect in an answer. Models answer in many shapes, so :func:`parse_plan`
accepts numbered or bulleted lists (``1.``, ``2)``, ``-``, ``*``, ``•``), markdown
(bold, headings, nested bullets folded into their parent), a JSON list of strings
or of objects, or a JSON object holding such a list; reasoning in ``<think>`` is
ignored, and a reply that only says there is nothing to infer (``NONE``) is an empty
plan. Without any list structure, each short line counts as one aspect.

Plan quality compares a plan with the row's gold ``rubric_aspects`` by embedding
similarity (all-MiniLM-L6-v2, cosine): a gold aspect is *recalled* when some plan
aspect reaches :data:`MATCH_THRESHOLD` with it, and a plan aspect is *precise* when
it reaches the threshold with some gold aspect. ``benchmarks/calibrate_plan_match.py``
derives the threshold from hand-written paraphrases of the bundled sample's aspects.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK, strip_reasoning

PlanOutcome = Literal["plan", "empty", "error", "skipped"]

# Cosine similarity at or above which a plan aspect and a gold aspect count as the same
# expectation. Chosen by benchmarks/calibrate_plan_match.py on the bundled sample: it
# best separates hand-written rewordings of an aspect (87% reach it) from the user's
# other aspects (2.4% do) and other users' aspects (0.6%); see docs/tasks.md, The planner.
MATCH_THRESHOLD = 0.45
# More aspects than this is not a plan but a dump; the rest are dropped.
MAX_ASPECTS = 20

_NAN = float("nan")


# A list item: bullet, "1." / "1)" / "(1)", or "a." / "a)", optionally after a heading mark.
_ITEM = re.compile(
    r"^(?P<indent>[ \t]*)(?:#{1,6}[ \t]*)?"
    r"(?:[-*•+▪◦‣]|\(?\d{1,2}[.)]|\(?[a-hA-H][.)](?=\s))"
    r"[ \t]+(?P<text>\S.*)$"
)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<text>\S.*)$")
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)
_NONE = re.compile(
    r"^(?:none|n/?a|nothing|no (?:clear |specific |particular )?(?:aspects?|expectations?|preferences?)\b.*)[.!]?$",
    re.IGNORECASE,
)
_JSON_KEYS = ("aspects", "expectations", "plan", "items", "list")
_ITEM_KEYS = ("aspect", "expectation", "name", "title", "text", "description")
# Lines that introduce a list rather than belong to it.
_PREAMBLE = re.compile(r":\s*$")


@dataclass(frozen=True)
class Plan:
    """A parsed planner reply.

    Attributes:
        outcome: ``plan`` (aspects found), ``empty`` (a reply without any),
            ``error`` / ``skipped`` (the backend produced no reply).
        aspects: the inferred aspects, in the order given.
    """

    outcome: PlanOutcome
    aspects: tuple[str, ...] = ()


def _clean(text: str) -> str:
    text = re.sub(r"(\*\*|__|`)", "", text)
    text = re.sub(r"^\s*[*_]+|[*_]+\s*$", "", text)
    return " ".join(text.split()).strip(" \t-–—:;,")


def _from_json_value(value: Any) -> list[str] | None:
    if isinstance(value, dict):
        for key in _JSON_KEYS:
            for name, inner in value.items():
                if isinstance(name, str) and name.strip().lower() == key:
                    return _from_json_value(inner)
        return None
    if not isinstance(value, list):
        return None
    out: list[str] = []
    for item in value:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            named = [v for k, v in item.items() if isinstance(k, str) and k.strip().lower() in _ITEM_KEYS
                     and isinstance(v, str)]
            strings = named or [v for v in item.values() if isinstance(v, str)]
            if strings:
                out.append(strings[0])
    return out


def _from_json(text: str) -> list[str] | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        for opener, closer in (("[", "]"), ("{", "}")):
            start, end = candidate.find(opener), candidate.rfind(closer)
            if start == -1 or end <= start:
                continue
            try:
                value = json.loads(candidate[start:end + 1])
            except (ValueError, RecursionError):
                continue
            found = _from_json_value(value)
            if found is not None:
                return found
    return None


def _from_lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    items: list[tuple[int, str]] = []  # (indent, text)
    for line in lines:
        match = _ITEM.match(line)
        if match:
            indent = len(match.group("indent").expandtabs(4))
            items.append((indent, match.group("text")))
        elif items and line.strip() and line.startswith((" ", "\t")) and not _HEADING.match(line):
            # A continuation of the item above (wrapped text).
            indent, previous = items[-1]
            items[-1] = (indent, f"{previous} {line.strip()}")
    if items:
        top = min(indent for indent, _ in items)
        merged: list[str] = []
        for indent, body in items:
            if indent > top and merged:
                # A nested bullet details its parent: one aspect, not two.
                merged[-1] = f"{merged[-1].rstrip(' :')}: {_clean(body)}" if merged[-1].rstrip().endswith(":") \
                    else f"{merged[-1]}; {_clean(body)}"
            else:
                merged.append(body)
        return merged
    headings = [m.group("text") for line in lines if (m := _HEADING.match(line))]
    if headings:
        return headings
    plain = [line.strip() for line in lines if line.strip()]
    return [line for line in plain if not _PREAMBLE.search(line) and len(line) <= 300]


def parse_plan(completion: str | None) -> Plan:
    """The aspects in a planner's reply (see module docstring for accepted shapes).

    Args:
        completion: the raw reply; backend markers for failed or skipped requests are
            recognized.
    """
    if completion is None:
        return Plan("empty")
    text = str(completion).strip()
    if text.startswith(ERROR_MARK):
        return Plan("error")
    if text.startswith(SKIPPED_MARK):
        return Plan("skipped")
    text = strip_reasoning(text).strip()
    if not text:
        return Plan("empty")
    found = _from_json(text)
    raw = found if found is not None else _from_lines(text)
    aspects: list[str] = []
    for item in raw:
        cleaned = _clean(item)
        if not cleaned or _NONE.match(cleaned) or cleaned.lower() in (a.lower() for a in aspects):
            continue
        aspects.append(cleaned)
    aspects = aspects[:MAX_ASPECTS]
    return Plan("plan" if aspects else "empty", tuple(aspects))


# --------------------------------------------------------------------------- quality


def match_counts(similarity: Any, threshold: float = MATCH_THRESHOLD) -> tuple[int, int]:
    """How many gold aspects are recalled and how many plan aspects are precise.

    Args:
        similarity: cosine similarities, shape ``(plan aspects, gold aspects)``.
        threshold: the similarity at which two aspects count as the same.
    """
    import numpy as np

    sims = np.asarray(similarity, dtype=float)
    if sims.size == 0:
        return 0, 0
    hits = sims >= threshold
    return int(hits.any(axis=0).sum()), int(hits.any(axis=1).sum())


@dataclass(frozen=True)
class PlanScore:
    """Quality of one plan against the gold aspects (None where undefined).

    Attributes:
        recall: share of gold aspects the plan recovered (0 for an empty plan).
        precision: share of plan aspects that match a gold aspect (None for an empty plan).
    """

    recall: float | None
    precision: float | None


# Unit vectors of aspect texts seen in this process: recall and precision are two
# aggregations over the same plans, and short texts are cheap to keep.
_VECTORS: dict[str, Any] = {}
_MAX_KEPT = 200_000


def _embeddings(texts: Sequence[str]) -> dict[str, Any] | None:
    """Unit vectors of ``texts``, or None when the embedding model is not installed."""
    from prb_tasks.text.encoder import EncoderUnavailable, shared_encoder

    missing = [t for t in dict.fromkeys(texts) if t not in _VECTORS]
    if missing:
        try:
            encoder = shared_encoder()
        except EncoderUnavailable as exc:
            _warn_once(f"{exc}; plan_recall and plan_precision are reported as NaN")
            return None
        if len(_VECTORS) + len(missing) > _MAX_KEPT:
            _VECTORS.clear()
        _VECTORS.update(zip(missing, encoder.encode(missing, normalize=True)))
    return {t: _VECTORS[t] for t in texts}


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        print(message, file=sys.stderr, flush=True)


def score_plans(
    items: Sequence[tuple[Sequence[str], Sequence[str]]], threshold: float = MATCH_THRESHOLD
) -> list[PlanScore] | None:
    """Recall and precision of many plans at once (one batched encoder call).

    Args:
        items: per row, the plan's aspects and the gold aspects.
        threshold: the similarity at which two aspects count as the same.

    Returns:
        One score per row, or None when the embedding model is not installed.
    """
    import numpy as np

    texts = [t for plan, gold in items for t in (*plan, *gold)]
    vectors = _embeddings(texts) if texts else {}
    if vectors is None:
        return None
    scores: list[PlanScore] = []
    for plan, gold in items:
        if not plan:
            scores.append(PlanScore(recall=0.0 if gold else None, precision=None))
            continue
        if not gold:
            scores.append(PlanScore(recall=None, precision=0.0))
            continue
        sims = np.stack([vectors[t] for t in plan]) @ np.stack([vectors[t] for t in gold]).T
        recalled, precise = match_counts(sims, threshold)
        scores.append(PlanScore(recall=recalled / len(gold), precision=precise / len(plan)))
    return scores


def _mean(values: Iterable[float | None]) -> float:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else _NAN


def plan_recall(items: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Aggregation: mean share of gold aspects recovered (empty plans count 0)."""
    scores = score_plans(items)
    return _NAN if scores is None else _mean(s.recall for s in scores)


def plan_precision(items: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Aggregation: mean share of plan aspects matching a gold aspect (over non-empty plans)."""
    scores = score_plans(items)
    return _NAN if scores is None else _mean(s.precision for s in scores)


# --------------------------------------------------------------------------- process_results


def process_plan(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """Stage 1: parse one plan; recall and precision are computed in the aggregation."""
    plan = parse_plan(results[0] if results else None)
    gold = list(doc.get("gold_aspects") or [])
    # Failed or skipped requests recover nothing (like a wrong verdict) but have no
    # aspects to be precise about.
    pair = (list(plan.aspects), gold)
    return {
        "plan_recall": pair,
        "plan_precision": pair,
        "plan_empty": int(plan.outcome == "empty"),
        "plan_size": len(plan.aspects),
        "error_rate": int(plan.outcome == "error"),
        "skip_rate": int(plan.outcome == "skipped"),
    }


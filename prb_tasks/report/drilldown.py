"""The per-pair data behind the HTML drill-down, as compact JSON.

Texts are shared across models (one copy per pair), long completions are cut, and the
JSON is escaped so it can sit inside a ``<script type="application/json">`` element:
no ``<``, ``>`` or ``&`` survives, so no model text can close the element.
"""

from __future__ import annotations

import json
from typing import Any

from prb_tasks.report.build import Report
from prb_tasks.report.formatting import short_label
from prb_tasks.report.pairtext import pair_texts
from prb_tasks.report.source import describe
from prb_tasks.report.tables import short_subset

MAX_COMPLETION = 2000
#: The prompt as sent is kept whole up to here (profiles and histories make it long).
MAX_PROMPT = 8000
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _cut(text: str, limit: int = MAX_COMPLETION) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [{len(text) - limit} more characters in the samples file]"


def _round(x: float) -> float:
    return round(float(x), 4)


def drilldown_data(report: Report) -> dict[str, Any]:
    """Models, pairs (texts once each) and every model's outcome on every pair."""
    entries = [e for e in report.entries if e.logged]
    texts = pair_texts(entries, report.notes)
    pair_index: dict[tuple[str, str], int] = {}
    pairs: list[dict[str, Any]] = []
    results: dict[str, list[list[Any]]] = {}
    section_of = {e.id: s.slug for s in report.sections for e in s.entries}
    for entry in entries:
        rows: list[list[Any]] = []
        per_pair: dict[int, list[list[Any]]] = {}
        for j, p in enumerate(entry.j_pair.tolist()):
            if entry.kind == "judge":
                per_pair.setdefault(p, []).append([
                    entry.j_pos[j], entry.j_letter[j], entry.j_outcome[j], int(entry.j_correct[j]),
                    _cut(entry.j_text[j])])
        for i, key in enumerate(entry.keys):
            gid = pair_index.get((entry.source, key))
            if gid is None:
                gid = pair_index[(entry.source, key)] = len(pairs)
                t = texts[(entry.source, key)]
                pairs.append({
                    "k": key, "src": describe(entry.source), "s": short_subset(entry.subset[i]),
                    "c": entry.category[i], "u": entry.user[i], "t": list(entry.tags[i]),
                    "q": t.question, "ch": t.chosen, "rj": t.rejected,
                    "a": [[a.get("aspect", ""), a.get("evidence", ""), a.get("reason", "")] for a in t.aspects],
                    "p": None if t.prompt is None else _cut(t.prompt, MAX_PROMPT), "pc": t.prompt_chosen,
                    "why": t.reason,
                    "dem": [[str(k), str(v)] for k, v in t.demographics.items()],
                })
            detail: Any = per_pair.get(i, []) if entry.kind == "judge" else [
                _round(entry.s_chosen[i]), _round(entry.s_rejected[i])]
            rows.append([gid, _round(entry.score[i]), detail])
        results[entry.id] = rows
    return {
        "models": [{"id": e.id, "label": e.label, "short": short_label(e.label, 24), "kind": e.kind,
                    "section": section_of[e.id],
                    "family": e.family.name} for e in entries],
        "sections": [{"slug": s.slug, "title": s.title, "models": [e.id for e in s.entries if e.logged]}
                     for s in report.sections],
        "pairs": pairs,
        "res": results,
    }


def script_json(data: Any) -> str:
    """JSON safe to place verbatim inside a ``<script type="application/json">`` element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    return text

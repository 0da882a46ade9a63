"""Scores of the few-shot tasks: the usual pair metrics plus the k-curve's.

Each document is one query at one ``k``; besides ``acc`` (pooled over every k, which
is rarely what you want) it emits ``acc_k<k>`` (the accuracy at its k), the same value
with its user for the user-resampled interval ``acc_k<k>_low`` / ``acc_k<k>_high``, and
``(k, user, correct)`` for the area under the k-curve ``aukc``
(:mod:`prb_tasks.fewshot.metrics`). Metrics of the other k are None (skipped when aggregated).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from prb_tasks.common.terminal import wrap_units
from prb_tasks.fewshot.split import KS
from prb_tasks.scoring.breakdowns import process_judge_both_users, process_scalar_users


def _per_k(out: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    out.pop("acc_macro", None)  # a group mean of subsets; the k-curve says more here
    k, user, correct = int(doc["k"]), str(doc["user_id"]), out["acc"]
    # Every document reports every k's metrics (None for another k), so lm-eval counts
    # the same documents for each metric; the aggregations skip the Nones.
    for other in KS:
        mine = other == k
        out[f"acc_k{other}"] = correct if mine else None
        out[f"acc_k{other}_low"] = (user, correct) if mine else None
        out[f"acc_k{other}_high"] = (user, correct) if mine else None
    out["aukc"] = (k, user, correct)
    return out


def process_fewshot_method(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """A method's two rewards ``[chosen, rejected]`` for one query at one k."""
    return _per_k(process_scalar_users(doc, results), doc)


def process_fewshot_judge(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One order of a query pair judged with k support pairs in the prompt."""
    return _per_k(process_judge_both_users(doc, results), doc)


_K_METRIC = re.compile(r"acc_k(\d+),none")


def k_curve_line(name: str, row: dict[str, Any]) -> str | None:
    """``name k-curve ...: k=0 63.8 (58.1-70.0), ...; aukc 68.0`` for a results row with
    per-k metrics, else None.

    Args:
        name: the task as the table shows it.
        row: the task's entry in lm-eval's ``results``.
    """
    ks = sorted(int(m.group(1)) for m in map(_K_METRIC.fullmatch, row) if m)
    if not ks:
        return None

    def number(key: str) -> float | None:
        value = row.get(f"{key},none")
        return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None

    def pct(key: str) -> str:
        value = number(key)
        return "-" if value is None else f"{100 * value:.1f}"

    def cell(k: int) -> str:
        low, high = number(f"acc_k{k}_low"), number(f"acc_k{k}_high")
        ci = f" ({pct(f'acc_k{k}_low')}-{pct(f'acc_k{k}_high')})" if low is not None and high is not None else ""
        return f"k={k} {pct(f'acc_k{k}')}{ci}"

    cells = [cell(k) for k in ks]
    # The area is taken over the k points that have a result (prb_tasks/fewshot/metrics.py):
    # say which when some are missing, so it is never read as the whole curve's.
    present = [k for k in ks if number(f"acc_k{k}") is not None]
    missing = [k for k in ks if k not in present]
    if number("aukc") is None or not present:
        area = "aukc - (no k point has a result)"
    elif missing:
        area = (f"aukc {pct('aukc')} over k = {', '.join(map(str, present))} only (no result at k = "
                f"{', '.join(map(str, missing))}; not comparable with a whole curve's)")
    else:
        area = f"aukc {pct('aukc')}"
    return f"{name} k-curve, acc % (95% CI over users): {', '.join(cells)}; {area}"


def k_curve_lines(name: str, row: dict[str, Any], width: int = 120) -> list[str]:
    """``k_curve_line`` laid out for a terminal: a heading line, then the points, two columns in,
    broken between points (never inside one) to fit ``width`` columns; [] without per-k metrics.

    Args:
        name: the task as the table shows it.
        row: the task's entry in lm-eval's ``results``.
        width: the most columns a line may take.
    """
    line = k_curve_line(name, row)
    if line is None:
        return []
    heading, _, points = line.partition(": ")
    # A point ("k=4 61.2 (55.0-67.1)") is one unit: its inner spaces must not be break points.
    glued = points.replace(" ", "\xa0").replace(",\xa0", ", ").replace(";\xa0", "; ")
    return [heading + ":", *wrap_units(glued, width, first="  ")]

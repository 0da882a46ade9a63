"""``prb compare``: judges and scalar RMs side by side, one row per run and task family."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prb_tasks.report.runs import Run, load_runs
from prb_tasks.report.stats import bootstrap_ci, longer_preference, pair_scores

_SHORT = {"Art_and_Entertainment": "art", "Lifestyle_and_Personal_Development": "life",
          "Society_and_Culture": "soc"}


@dataclass
class Row:
    """One model on one task family."""

    model: str
    task: str
    kind: str
    pairs: int | None
    acc: float | None
    ci_low: float | None
    ci_high: float | None
    acc_macro: float | None
    per_subset: dict[str, float]
    acc_pair: float | None
    consistency: float | None
    pos_a_rate: float | None
    longer_pref: float | None
    parse_fail: float | None
    error_rate: float | None


def _value(metrics: dict[str, Any], name: str) -> float | None:
    value = metrics.get(f"{name},none")
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def _row(run: Run, group: str) -> Row:
    metrics = run.results.get(group, {})
    subtasks = run.groups[group]
    per_subset: dict[str, float] = {}
    for task in subtasks:
        alias = str(run.results.get(task, {}).get("alias", task)).strip(" -")
        value = _value(run.results.get(task, {}), "acc")
        if value is not None:
            per_subset[_SHORT.get(alias, alias)] = value
    strata = [pair_scores(run.samples[t]) for t in subtasks if run.samples.get(t)]
    ci = bootstrap_ci(strata) if strata else None
    all_samples = [s for t in subtasks for s in run.samples.get(t, [])]
    kind = "scalar" if "tie_rate,none" in metrics else "judge"
    return Row(
        model=run.label, task=group, kind=kind,
        pairs=sum(len(s) for s in strata) if strata else None,
        acc=_value(metrics, "acc"),
        ci_low=ci[0] if ci else None, ci_high=ci[1] if ci else None,
        acc_macro=_value(metrics, "acc_macro"), per_subset=per_subset,
        acc_pair=_value(metrics, "acc_pair"), consistency=_value(metrics, "consistency"),
        pos_a_rate=_value(metrics, "pos_a_rate"),
        longer_pref=longer_preference(all_samples) if kind == "judge" else None,
        parse_fail=_value(metrics, "parse_fail"), error_rate=_value(metrics, "error_rate"),
    )


def build_rows(paths: list[Path]) -> list[Row]:
    """Rows for every prb group found under ``paths``, best accuracy first per task."""
    # Planner stage 1 (personalized_rb_plan) scores plans, not pairs: it has no acc row.
    rows = [_row(run, group) for run in load_runs(paths) for group in run.groups
            if "acc,none" in run.results.get(group, {})]
    return sorted(rows, key=lambda r: (r.task, -(r.acc if r.acc is not None else -1.0)))


def _fmt(value: float | None, pct: bool = True) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" if pct else f"{value:.3f}"


def render_markdown(rows: list[Row]) -> str:
    """A table a person can read at a glance (percentages)."""
    head = ["task", "model", "kind", "pairs", "acc %", "95% CI (pairs)", "macro", "art/life/soc",
            "pair acc", "consistent", "A-rate", "picks longer", "parse fail", "errors"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ci = f"{_fmt(r.ci_low)}-{_fmt(r.ci_high)}" if r.ci_low is not None else "-"
        subsets = "/".join(_fmt(r.per_subset.get(k)) for k in ("art", "life", "soc"))
        cells = [r.task, r.model, r.kind, str(r.pairs or "-"), _fmt(r.acc), ci, _fmt(r.acc_macro),
                 subsets, _fmt(r.acc_pair), _fmt(r.consistency), _fmt(r.pos_a_rate),
                 _fmt(r.longer_pref), _fmt(r.parse_fail), _fmt(r.error_rate)]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [
        "",
        "acc: share of judgments (judges) or pairs (scalar RMs) that favour the user's chosen answer.",
        "95% CI: bootstrap over pairs within each subset (needs --log_samples); both orders of a pair move together.",
        "A-rate and picks longer: 50 means no position / length preference. Oracle rows are diagnostic upper bounds.",
    ]
    return "\n".join(lines + notes)


def compare(paths: list[Path], fmt: str = "markdown") -> str:
    """The comparison of every run under ``paths`` in ``fmt`` (markdown or json)."""
    rows = build_rows(paths)
    if not rows:
        return "prb compare: no results of prb tasks found (run prb eval with --output_path)"
    if fmt == "json":
        return json.dumps([asdict(r) for r in rows], indent=2)
    return render_markdown(rows)

"""``prb audit DATA``: one table of content-blind shortcuts on a data set, with intervals."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from prb_tasks.audit.baselines import BASELINES, outcomes
from prb_tasks.audit.data import AuditData, load_audit_data, parse_request
from prb_tasks.audit.people import MAJORITY, has_people, people_lines
from prb_tasks.common.errors import PRBError
from prb_tasks.common.terminal import fit_lines
from prb_tasks.report.formatting import ci, pct
from prb_tasks.report.tables import Table, short_subset
from prb_tasks.stats.pairs import Interval
from prb_tasks.stats.resampling import Design, design_for

FORMATS = ("table", "markdown", "json")
MAX_SUBSET_COLUMNS = 6
HOW_TO_READ = (
    "50% means the shortcut tells nothing about which response the user chose; far from 50% either way, the data "
    "gives the label away through it (below 50%, the opposite rule wins). Ties count 1/2. A model is only "
    "interesting where it beats the best row; check that row's interval, not its point."
)


@dataclass(frozen=True)
class AuditRow:
    """One shortcut's result on the data set.

    Attributes:
        name, rule: which shortcut.
        pairs: pairs it applied to.
        acc: accuracy with its interval (None: it applied to no pair).
        ties: share of its pairs where both responses got the same number.
        subsets: accuracy per subset.
    """

    name: str
    rule: str
    pairs: int
    acc: Interval | None
    ties: float | None
    subsets: dict[str, float]


def audit(data: AuditData) -> tuple[list[AuditRow], Design]:
    """Run every shortcut on ``data``.

    Args:
        data: the data set's pairs.
    """
    pairs = data.pairs
    design = design_for([p.key for p in pairs], [p.subset for p in pairs], [p.user for p in pairs])
    rows = []
    for baseline in (*BASELINES, MAJORITY) if has_people(pairs) else BASELINES:
        credit, tie = outcomes(baseline, pairs)
        measured = ~np.isnan(credit)
        acc = design.only(measured).interval(credit[measured]) if measured.any() else None
        subsets = {name: float(credit[measured & (design.subsets == name)].mean())
                   for name in dict.fromkeys(design.subsets.tolist()) if (measured & (design.subsets == name)).any()}
        ties = float(tie[measured].mean()) if measured.any() else None
        rows.append(AuditRow(baseline.name, baseline.rule, int(measured.sum()), acc, ties, subsets))
    return rows, design


def _table(data: AuditData, rows: list[AuditRow], design: Design) -> Table:
    subsets = list(dict.fromkeys(design.subsets.tolist()))
    shown = subsets if 1 < len(subsets) <= MAX_SUBSET_COLUMNS else []
    table = Table(f"Content-blind shortcuts on {data.label}: {len(data.pairs)} pairs, intervals resample "
                  f"{design.label()}" + (" (whole users with all their pairs)" if design.unit == "users"
                                         else " (within subsets)"),
                  ["shortcut", "picks", "pairs", "acc %", "95% CI", "ties %", *[short_subset(n) for n in shown]])
    for row in rows:
        table.rows.append([
            (row.name, row.name), (row.rule, row.rule), (str(row.pairs), row.pairs),
            (pct(row.acc.value if row.acc else None), row.acc.value if row.acc else None),
            (ci(row.acc) if row.acc else "-", None), (pct(row.ties), row.ties),
            *[(pct(row.subsets.get(n)), row.subsets.get(n)) for n in shown],
        ])
    if len(subsets) > MAX_SUBSET_COLUMNS:
        table.more = f"{len(subsets)} subsets; per subset in --format json"
    return table


def _json(data: AuditData, rows: list[AuditRow], design: Design) -> str:
    def interval(x: Interval | None) -> Any:
        return None if x is None else {"value": x.value, "low": x.low, "high": x.high}

    return json.dumps({
        "data": data.label, "family": data.family, "pairs": len(data.pairs),
        "resampled": {"unit": design.unit, "count": design.units},
        "shortcuts": [{"name": r.name, "picks": r.rule, "pairs": r.pairs, "acc": interval(r.acc),
                       "ties": r.ties, "subsets": r.subsets} for r in rows],
        "people": people_lines(data.pairs),
        "how_to_read": HOW_TO_READ,
    }, indent=2, ensure_ascii=False)


def render(data: AuditData, rows: list[AuditRow], design: Design, fmt: str) -> str:
    """The audit as ``fmt``: the terminal table, Markdown or JSON."""
    if fmt == "json":
        return _json(data, rows, design)
    table = _table(data, rows, design)
    if fmt == "markdown":
        from prb_tasks.report.render_md import markdown_table

        people = people_lines(data.pairs)
        return "\n".join(markdown_table(table) + ([""] + people if people else []) + [HOW_TO_READ])
    from prb_tasks.report.render_text import text_table

    # On a terminal the "picks" column (a sentence per row) moves under the table, so the table
    # fits 120 columns; Markdown and JSON keep it in place.
    picks = table.head.index("picks")
    head = [h for i, h in enumerate(table.head) if i != picks]
    body = [[c[0] for i, c in enumerate(r) if i != picks] for r in table.rows]
    lines = [table.title + (f" ({table.more})" if table.more else "")]
    lines += text_table([head, *body], right=set(range(1, len(head))) - {head.index("95% CI")})
    lines += ["Shortcuts, and what each picks:", *(f"  {r[0][0]}: {r[picks][0]}" for r in table.rows)]
    people = people_lines(data.pairs)
    return "\n".join(fit_lines(lines + ([""] + people if people else []) + ["", HOW_TO_READ]))


def run_command(args: Any) -> int:
    """``prb audit`` from parsed arguments; 2 on a mistake the user can fix.

    Args:
        args: argparse namespace with ``data``, ``family``, ``metadata``, ``format``.
    """
    try:
        if args.format not in FORMATS:
            raise PRBError(f"prb audit: unknown format {args.format!r}; use one of {', '.join(FORMATS)}")
        data = load_audit_data(parse_request(args.data, args.family, args.metadata))
        rows, design = audit(data)
        print(render(data, rows, design, args.format), flush=True)
    except PRBError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0

"""``report.html``: one self-contained page (inline CSS, JS, charts and data; no network).

Safety: the page is rendered by Jinja with autoescaping, the per-pair data sits in a
``<script type="application/json">`` element with ``<``, ``>`` and ``&`` escaped, the
script inserts every text with ``textContent``, and a Content-Security-Policy with a
per-report nonce refuses any script or style the report did not put there itself.
"""

from __future__ import annotations

import base64
import secrets
from pathlib import Path

import jinja2

from prb_tasks.report.build import Report
from prb_tasks.report.drilldown import drilldown_data, script_json
from prb_tasks.report.peruser_tables import per_user_tables
from prb_tasks.report.predicts import predicts_lines
from prb_tasks.report.render_md import HOW_TO_READ
from prb_tasks.report.tables import breakdown_tables, ladder_table, main_tables

ASSETS = Path(__file__).with_name("assets")


def _uri(path: Path) -> str:
    """The chart as a data URI: its SVG (crisp at any width, text kept as text), else the PNG."""
    svg = path.with_suffix(".svg")
    if svg.is_file():
        return "data:image/svg+xml;base64," + base64.b64encode(svg.read_bytes()).decode("ascii")
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def render_html(report: Report, chart_folder: Path | None) -> str:
    """The report page.

    Args:
        report: a built report (charts already drawn, if any).
        chart_folder: where the chart PNGs are, to inline them.
    """
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(ASSETS)), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    data = drilldown_data(report)  # may add notes (texts not found), so before the notes are read
    sections = []
    for s in report.sections:
        sections.append({
            "slug": s.slug, "title": s.title, "diagnostic": s.diagnostic, "shared_all": s.shared_all,
            "union": s.union,
            "tables": main_tables(s),
            "breakdowns": breakdown_tables(s, limit=None),
            "per_user": per_user_tables(s.per_user),
            "per_user_notes": s.per_user.notes if s.per_user else [],
            "charts": [{"title": title, "uri": _uri(chart_folder / file), "headline": file.endswith("_accuracy.png"),
                        "per_user": file.endswith("_peruser.png")}
                       for title, file in report.charts.get(s.slug, []) if chart_folder is not None],
        })
    return env.get_template("report.html.j2").render(
        nonce=secrets.token_urlsafe(16),
        css=(ASSETS / "report.css").read_text(encoding="utf-8"),
        js=(ASSETS / "report.js").read_text(encoding="utf-8"),
        generated=report.generated, inputs=", ".join(report.inputs), howto=HOW_TO_READ,
        sections=sections, ladders=[ladder_table(lad) for lad in report.ladders], notes=report.notes,
        predicts=predicts_lines(report.predicts),
        data=script_json(data),
    )

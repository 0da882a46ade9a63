"""``prb validity``'s outputs: the printed table, validity.json / .md / .html and the scatter chart."""

from __future__ import annotations

import html
import json
import math
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from prb_tasks.common.errors import PRBError
from prb_tasks.common.install_hint import pip_install
from prb_tasks.common.terminal import WIDTH, fit
from prb_tasks.report.validity import Estimate, Validity, validity
from prb_tasks.report.validity_headline import headline, headline_data
from prb_tasks.rl.downstream import TASK as RL_TASK

MEANINGS = {
    "spearman": "rank correlation of accuracy and gain (-1..1)",
    "kendall": "share of model pairs ordered alike minus unlike (tau-b, -1..1)",
    "pearson": "linear correlation of the values (-1..1)",
    "ndcg": "are the most accurate models the best downstream? (top-weighted, 1 = perfect)",
    "rbo": "overlap of the two orders, top-weighted, p = 0.9 (1 = same order)",
}


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _ci(estimate: Estimate, which: str) -> str:
    interval = getattr(estimate, which)
    return "-" if interval is None else f"[{interval.low:.2f}, {interval.high:.2f}]"


def _rows(report: Validity) -> list[list[str]]:
    return [[name, _num(e.value), _ci(e, "by_questions"), _ci(e, "by_models"), MEANINGS[name]]
            for name, e in report.measures.items()]


def _model_rows(report: Validity) -> list[list[str]]:
    return [[m.label, f"{100 * m.benchmark.mean:.1f}", _num(m.downstream.mean)]  # type: ignore[union-attr]
            for m in report.models]


def _table(header: list[str], rows: list[list[str]], width: int = WIDTH) -> str:
    """Aligned columns; where a row would pass ``width``, its last column (the words: a measure's
    meaning) is wrapped by words under its own start, so the numbers keep their columns."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    start = sum(w + 2 for w in widths[:-1])
    room = max(width - start, 20)
    lines = []
    for row in [header, *rows]:
        head = "  ".join(str(c).ljust(w) for c, w in zip(row[:-1], widths))
        last, *more = textwrap.wrap(str(row[-1]), room, break_long_words=False) or [""]
        lines += [f"{head}  {last}".rstrip(), *(" " * start + line for line in more)]
    return "\n".join(lines)


def _gain(report: Validity) -> tuple[str, str]:
    """What the gain is (for the intro) and the chart's y label: ``prb rl``'s runs (task
    ``personalized_rb_rl``) measure training against the RM, not picking with it."""
    if report.downstream == RL_TASK:
        return ("gold score of the answer of the policy trained against the RM minus the starting policy's",
                "downstream gain (RL-trained minus starting policy)")
    return "gold score of the best-of-N pick minus best-of-1's", "downstream gain (best-of-N minus best-of-1)"


def _intro(report: Validity) -> list[str]:
    return [
        f"benchmark: {report.benchmark} (accuracy; resampled: {report.units[0]})",
        f"downstream: {report.downstream} (gain: {_gain(report)[0]}; gold = "
        f"rubric grade, or the simulated user's reward; resampled: {report.units[1]})",
        f"models: {len(report.models)}; 95% intervals from {report.iters} bootstrap draws over questions (users where "
        "the data names them) and over models",
    ]


def render_text(report: Validity) -> str:
    """What ``prb validity`` prints."""
    from prb_tasks.common.terminal import fit_lines
    from prb_tasks.report.render_text import narrow_table

    # The intro's sentences are wrapped by words to a terminal's 120 columns.
    parts = [*fit_lines([*(f"WARNING: {w}" for w in report.warnings), *_intro(report)]), "",
             *fit_lines(headline(report)), "",
             # Long model names are shortened to fit, each shortened one then in full by its number
             # (as prb compare does); validity.md / .html keep them whole.
             *narrow_table([["#", "model", "accuracy %", "gain"],
                            *([str(i), *row] for i, row in enumerate(_model_rows(report), 1))], {0, 2, 3}), "",
             _table(["measure", "value", "CI over questions", "CI over models", "meaning"], _rows(report))]
    return "\n".join(parts)


def render_markdown(report: Validity) -> str:
    """validity.md."""
    def md(header: list[str], rows: list[list[str]]) -> str:
        cell = lambda s: str(s).replace("|", "\\|").replace("<", "&lt;")  # noqa: E731
        return "\n".join([f"| {' | '.join(header)} |", f"|{'---|' * len(header)}",
                          *(f"| {' | '.join(cell(c) for c in row)} |" for row in rows)])
    return "\n".join(["# Does accuracy predict downstream quality?", "",
                      *(f"> **Warning:** {w}" for w in report.warnings), "",
                      *(f"- {line}" for line in _intro(report)), "",
                      "**How much accuracy predicts:**", "", *(f"- {line}" for line in headline(report)), "",
                      md(["model", "accuracy %", "gain"], _model_rows(report)), "",
                      md(["measure", "value", "CI over questions", "CI over models", "meaning"], _rows(report)),
                      "", "![accuracy vs gain](validity.png)", ""])


def render_json(report: Validity) -> str:
    """validity.json."""
    payload: dict[str, Any] = {
        "benchmark": report.benchmark, "downstream": report.downstream,
        "units": {"benchmark": report.units[0], "downstream": report.units[1]},
        "models": [{"label": m.label, "accuracy": m.benchmark.mean, "gain": m.downstream.mean}  # type: ignore[union-attr]
                   for m in report.models],
        "measures": {name: asdict(e) for name, e in report.measures.items()},
        "warnings": report.warnings, "notes": report.notes, "headline": headline_data(report),
    }
    return json.dumps(_finite(payload), indent=2, allow_nan=False, default=str)


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity as None (JSON has no NaN: an undefined
    correlation, e.g. over models that all scored the same, is written as null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def render_html(report: Validity) -> str:
    """validity.html: the report's section, with the scatter chart."""
    esc = html.escape

    def table(header: list[str], rows: list[list[str]]) -> str:
        head = "".join(f"<th>{esc(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    warnings = "".join(f'<p class="warning"><strong>Warning:</strong> {esc(w)}</p>' for w in report.warnings)
    intro = "".join(f"<li>{esc(line)}</li>" for line in _intro(report))
    said = "".join(f"<li>{esc(line)}</li>" for line in headline(report))
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>prb validity</title>"
            "<style>body{font-family:sans-serif;max-width:60rem;margin:auto;padding:1rem}"
            "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem}"
            ".warning{background:#fff3cd;padding:.5rem}img{max-width:100%}</style></head><body>"
            "<section id=\"validity\"><h2>Does accuracy predict downstream quality?</h2>"
            f"{warnings}<ul>{intro}</ul><h3>How much accuracy predicts</h3><ul>{said}</ul>"
            f"{table(['model', 'accuracy %', 'gain'], _model_rows(report))}"
            f"{table(['measure', 'value', 'CI over questions', 'CI over models', 'meaning'], _rows(report))}"
            "<img src=\"validity.png\" alt=\"Benchmark accuracy against downstream gain, one labelled point per "
            "model\"></section></body></html>")


def draw_scatter(report: Validity, stem: Path) -> None:
    """Accuracy (x, %) against downstream gain (y), one labelled point per model, as SVG, PDF and PNG."""
    from prb_tasks.report.chart_helpers import label_points, pyplot, save_figure
    from prb_tasks.report.formatting import short_label

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    xs = [100 * m.benchmark.mean for m in report.models]  # type: ignore[union-attr]
    ys = [m.downstream.mean for m in report.models]  # type: ignore[union-attr]
    ax.scatter(xs, ys, color="#1f6fb4", marker="o", label="one model")
    # The compare charts' labeller: tied models share one label, close labels are moved apart.
    label_points(ax, [(x, y, short_label(m.label, 36)) for x, y, m in zip(xs, ys, report.models)])
    rho = report.measures["spearman"].value
    ax.set_xlabel("benchmark accuracy (%)")
    ax.set_ylabel(_gain(report)[1])
    ax.set_xlim(-5, 105)
    title = (f"Does accuracy predict downstream quality? Spearman {_num(rho, 2)} over {len(xs)} models. "
             f"Benchmark: {report.benchmark}; downstream: {report.downstream}")
    ax.set_title(textwrap.fill(title, 80), fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=7)
    save_figure(fig, stem)


def write_files(out: Path, stem: str, texts: dict[str, str], draw: Callable[[Path], None] | None,
                notes: list[str]) -> list[Path]:
    """Write ``<stem>.<suffix>`` for each rendered text, then the chart; the paths written.

    Args:
        out: the folder (made if missing; a file there is one error line).
        stem: the files' name without suffix.
        texts: rendered text per suffix, in the order written.
        draw: draws the chart to ``out/stem`` as SVG, PDF and PNG; None for no chart.
        notes: the report's notes, told when matplotlib is missing.
    """
    if out.exists() and not out.is_dir():
        raise PRBError(f"prb validity: --out {out} is a file; give a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for suffix, text in texts.items():
            (out / f"{stem}.{suffix}").write_text(text, encoding="utf-8")
            written.append(out / f"{stem}.{suffix}")
    except OSError as exc:
        raise PRBError(f"prb validity: cannot write into {out}: {exc.strerror or exc}") from None
    if draw is not None:
        try:
            draw(out / stem)
        except ImportError:
            notes.append(f"chart skipped: matplotlib is not installed ({pip_install('report')})")
        else:
            written += [out / f"{stem}.{ext}" for ext in ("svg", "pdf", "png")]
    return written


def write(report: Validity, out: Path, charts: bool = True) -> list[Path]:
    """Write validity.json, validity.md, validity.html and the chart into ``out``."""
    texts = {"html": render_html(report), "md": render_markdown(report), "json": render_json(report)}
    return write_files(out, "validity", texts, (lambda stem: draw_scatter(report, stem)) if charts else None,
                       report.notes)


def run_command(args: Any) -> int:
    """``prb validity`` from parsed arguments: print, write, return the exit code."""
    try:
        if args.iters < 100:
            raise PRBError(f"prb validity: --iters must be at least 100 (got {args.iters}); 2000 is the default")
        report = validity(args.paths, args.benchmark, args.downstream, iters=args.iters)
        written = write(report, args.out, charts=not args.no_charts) if args.out else []
        for note in report.notes:
            print(fit(f"prb validity: {note}"), file=sys.stderr)
        print(render_json(report) if args.format == "json" else render_text(report), flush=True)
        if written:
            print(fit(f"wrote {', '.join(p.name for p in written)} in {args.out}"), file=sys.stderr)
    except (PRBError, KeyboardInterrupt, BrokenPipeError) as exc:
        from prb_tasks.report.compare import stopped

        return stopped("prb validity", exc)
    return 0

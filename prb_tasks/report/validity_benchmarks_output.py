"""Outputs of ``prb validity`` across benchmarks: the printed tables, validity_benchmarks.json /
.md / .html and the chart (one panel per benchmark, the same axes)."""

from __future__ import annotations

import html
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from prb_tasks.common.errors import PRBError
from prb_tasks.common.terminal import WIDTH, column_parts, fit, fit_lines
from prb_tasks.report.formatting import short_label
from prb_tasks.report.published_scores import read_scores
from prb_tasks.report.render_md import md_text
from prb_tasks.report.validity_benchmarks import CrossValidity, cross_validity
from prb_tasks.report.validity_output import write_files
from prb_tasks.stats.correlation import MEASURES

STEM = "validity_benchmarks"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cell(estimate: Any, which: str = "by_models") -> str:
    interval = getattr(estimate, which)
    value = _num(estimate.value)
    return value if interval is None else f"{value} [{interval.low:.2f}, {interval.high:.2f}]"


def _table(header: list[str], rows: list[list[str]], keep: int = 1) -> str:
    """Aligned columns; a table wider than a terminal is shown in parts, each repeating the first ``keep``
    columns (what names a row)."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    return "\n\n".join("\n".join("  ".join(str(row[i]).ljust(widths[i]) for i in part).rstrip()
                                  for row in [header, *rows]) for part in column_parts(widths, keep=keep))


def benchmark_rows(report: CrossValidity) -> tuple[list[str], list[list[str]]]:
    """Per benchmark: models, each measure with its interval over models, and the source."""
    header = ["benchmark", "models", *MEASURES, "spearman, CI over questions", "scores from"]
    rows = [[b.name, str(len(report.contestants)), *(_cell(b.estimates[m]) for m in MEASURES),
             _cell(b.estimates["spearman"], "by_questions") if b.estimates["spearman"].by_questions else "-",
             b.source] for b in report.benchmarks]
    return header, rows


def model_rows(report: CrossValidity) -> tuple[list[str], list[list[str]]]:
    """Per contestant: downstream gain and each benchmark's score."""
    header = ["model", "downstream gain", *(b.name for b in report.benchmarks)]
    rows = [[c.label, f"{c.gain:.3f}", *(f"{_shown(b.values)[i]:.1f}" for b in report.benchmarks)]
            for i, c in enumerate(report.contestants)]
    return header, rows


def model_table(report: CrossValidity, width: int = WIDTH) -> str:
    """The model table as printed: numbered rows, in parts that each repeat the number and the name;
    names too long to leave room for a number beside them are shortened (:func:`short_label`, as
    ``prb compare`` does), and those that lose more than their arguments' names follow in full."""
    header, rows = model_rows(report)
    rows = [[str(i), *row] for i, row in enumerate(rows, 1)]
    widths = [max(len(str(c)) for c in col) for col in zip(["#", *header], *rows)]
    room = max(12, width - widths[0] - 4 - max(widths[2:]))
    if widths[1] > room:
        for row in rows:
            row[1] = short_label(row[1], room)
    full = [f"model #{i}: {c.label}" for i, c in enumerate(report.contestants, 1)
            if rows[i - 1][1] != short_label(c.label, len(c.label))]
    return "\n".join([_table(["#", *header], rows, keep=2), *fit_lines(full, width)])


def pair_rows(report: CrossValidity) -> tuple[list[str], list[list[str]]]:
    """Per pair of benchmarks and measure: the difference, its interval over models and the tests."""
    header = ["first - second", "measure", "difference [95% CI over models]", "bootstrap p", "Williams t (p)"]
    rows = []
    for pair in report.pairs:
        for name, d in pair.differences.items():
            ci = f" [{d.interval.low:+.2f}, {d.interval.high:+.2f}]" if d.interval else ""
            value = "-" if d.value is None else f"{d.value:+.2f}{ci}"
            test = "-" if d.williams_t is None else f"{d.williams_t:+.2f} ({d.williams_p:.2g})"
            rows.append([f"{pair.first} - {pair.second}", name, value, _num(d.p_bootstrap, 3), test])
    return header, rows


def intro(report: CrossValidity) -> list[str]:
    """The lines above the tables: what was compared, on how many models, resampled how."""
    return [
        f"downstream: {report.downstream} (gain: gold score of the best-of-N pick minus best-of-1's)",
        f"models: {len(report.contestants)}; every correlation below rests on these {len(report.contestants)} "
        "models (every benchmark scores all of them)",
        f"95% intervals: {report.iters} bootstrap draws over models, the same draws for every benchmark (so "
        "differences are paired); over questions only for a benchmark whose per-question results the runs hold",
        "tests per pair: bootstrap of the difference over models (two-sided p), and Williams' t-test for two "
        "correlations sharing the downstream (Pearson on values, Spearman on ranks; n - 3 degrees of freedom)",
    ]


def _shown(values: np.ndarray) -> np.ndarray:
    """Scores in percent: a benchmark whose scores all lie in [0, 1] is read as fractions."""
    return values * 100 if np.all((values >= 0) & (values <= 1)) else values


def render_text(report: CrossValidity) -> str:
    """What ``prb validity`` prints when it compares benchmarks."""
    parts = [*(f"WARNING: {w}" for w in report.warnings), *intro(report), "",
             model_table(report), "", _table(*benchmark_rows(report)), "",
             _table(*pair_rows(report), keep=2), "",
             *(p.verdict for p in report.pairs)]
    # Sentences are wrapped by words to a terminal's 120 columns (they reached 299 with long names).
    return fit("\n".join(parts))


def _md_cell(text: object) -> str:
    """A table cell's text for Markdown: HTML shown as text, no column break, one line."""
    return md_text(str(text)).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: CrossValidity) -> str:
    """validity_benchmarks.md."""
    # Benchmark and model names come from a scores file and results files: every piece of
    # text is escaped (headers, warnings and verdicts quote them too), as the HTML report does.
    def md(header: list[str], rows: list[list[str]]) -> str:
        return "\n".join([f"| {' | '.join(_md_cell(h) for h in header)} |", f"|{'---|' * len(header)}",
                          *(f"| {' | '.join(_md_cell(c) for c in row)} |" for row in rows)])
    return "\n".join(["# Which benchmark predicts downstream quality?", "",
                      *(f"> **Warning:** {md_text(w)}" for w in report.warnings), "",
                      *(f"- {md_text(line)}" for line in intro(report)), "", md(*model_rows(report)), "",
                      md(*benchmark_rows(report)), "", md(*pair_rows(report)), "",
                      *(f"- {md_text(p.verdict)}" for p in report.pairs), "",
                      f"![benchmark score against downstream gain]({STEM}.png)", ""])


def render_json(report: CrossValidity) -> str:
    """validity_benchmarks.json."""
    payload = {
        "downstream": report.downstream,
        "models": [{"label": c.label, "gain": c.gain,
                    "scores": {b.name: float(b.values[i]) for b in report.benchmarks}}
                   for i, c in enumerate(report.contestants)],
        "n_models": len(report.contestants),
        "benchmarks": [{"name": b.name, "source": b.source,
                        "measures": {m: asdict(e) for m, e in b.estimates.items()}} for b in report.benchmarks],
        "pairs": [{"first": p.first, "second": p.second, "verdict": p.verdict,
                   "differences": {m: asdict(d) for m, d in p.differences.items()}} for p in report.pairs],
        "iters": report.iters, "warnings": report.warnings, "notes": report.notes,
    }
    return json.dumps(payload, indent=2, allow_nan=False, default=str)


def render_html(report: CrossValidity) -> str:
    """validity_benchmarks.html: the tables, the sentences and the chart."""
    esc = html.escape

    def table(header: list[str], rows: list[list[str]]) -> str:
        head = "".join(f"<th>{esc(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    warnings = "".join(f'<p class="warning"><strong>Warning:</strong> {esc(w)}</p>' for w in report.warnings)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>prb validity: benchmarks</title>"
            "<style>body{font-family:sans-serif;max-width:72rem;margin:auto;padding:1rem}"
            "table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}td,th{border:1px solid #ccc;"
            "padding:.3rem .6rem}.warning{background:#fff3cd;padding:.5rem}img{max-width:100%}</style></head><body>"
            "<section id=\"validity-benchmarks\"><h2>Which benchmark predicts downstream quality?</h2>"
            f"{warnings}<ul>{''.join(f'<li>{esc(line)}</li>' for line in intro(report))}</ul>"
            f"{table(*model_rows(report))}{table(*benchmark_rows(report))}{table(*pair_rows(report))}"
            f"<ul>{''.join(f'<li>{esc(p.verdict)}</li>' for p in report.pairs)}</ul>"
            f"<img src=\"{STEM}.png\" alt=\"One panel per benchmark: its score of each model against the model's "
            "downstream gain, the same axes in every panel\"></section></body></html>")


def draw_panels(report: CrossValidity, stem: Path) -> None:
    """One panel per benchmark: score (x, %) against downstream gain (y), the same axes everywhere."""
    from prb_tasks.report.chart_helpers import label_points, pyplot, save_figure

    plt = pyplot()
    count = len(report.benchmarks)
    columns = min(count, 3)
    rows = -(-count // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.6 * rows), sharex=True, sharey=True,
                             squeeze=False)
    gains = np.array([c.gain for c in report.contestants])
    xs_all = np.concatenate([_shown(b.values) for b in report.benchmarks])
    pad = max(1.0, 0.08 * float(np.ptp(xs_all)))
    # Room above the highest point for its label (labels sit above their points).
    y_pad = max(1e-6, float(np.ptp(gains))) if len(gains) else 1.0
    y_limits = (float(gains.min()) - 0.1 * y_pad, float(gains.max()) + 0.35 * y_pad) if len(gains) else (0.0, 1.0)
    for k, bench in enumerate(report.benchmarks):
        ax = axes[k // columns][k % columns]
        xs = _shown(bench.values)
        ax.scatter(xs, gains, color="#1f6fb4", marker="o", label="one model", zorder=3)
        if np.ptp(xs) > 0 and len(xs) >= 2:
            slope, intercept = np.polyfit(xs, gains, 1)
            line = np.array([xs.min(), xs.max()])
            ax.plot(line, slope * line + intercept, color="#888888", linestyle="--", label="least-squares line")
        label_points(ax, [(float(x), float(y), short_label(c.label, 24))
                           for x, y, c in zip(xs, gains, report.contestants)])
        rho = bench.estimates["spearman"].value
        ax.set_title(f"{bench.name}\nSpearman {_num(rho)} over {len(xs)} models", fontsize=8)
        ax.set_xlabel("benchmark score (%)")
        if k % columns == 0:
            ax.set_ylabel("downstream gain (best-of-N minus best-of-1)")
        ax.set_xlim(float(xs_all.min()) - pad, float(xs_all.max()) + pad)
        ax.set_ylim(*y_limits)
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=7)
    for k in range(count, rows * columns):
        axes[k // columns][k % columns].set_visible(False)
    fig.suptitle(f"Which benchmark predicts the downstream ranking? Downstream: {report.downstream}", fontsize=9)
    save_figure(fig, stem)


def write(report: CrossValidity, out: Path, charts: bool = True) -> list[Path]:
    """Write validity_benchmarks.{html,md,json} and the chart into ``out``."""
    texts = {"html": render_html(report), "md": render_markdown(report), "json": render_json(report)}
    return write_files(out, STEM, texts, (lambda stem: draw_panels(report, stem)) if charts else None, report.notes)


def wanted(args: Any) -> bool:
    """Whether the command line asks for the cross-benchmark report."""
    return bool(getattr(args, "compare_with", None) or getattr(args, "scores", None))


def run_command(args: Any) -> int:
    """``prb validity --compare-with TASK`` / ``--scores FILE``: print, write, return the exit code."""
    try:
        if args.iters < 100:
            raise PRBError(f"prb validity: --iters must be at least 100 (got {args.iters}); 2000 is the default")
        if args.scores and args.scores.is_dir():
            raise PRBError(f"prb validity: --scores {args.scores} is a folder; give a CSV or JSON file of scores")
        scores = read_scores(args.scores) if args.scores else None
        report = cross_validity(args.paths, scores, args.compare_with, args.benchmark, args.downstream,
                                iters=args.iters)
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

"""``prb compare``: build the report, write its files, return what to print."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.report.build import Report, build_report
from prb_tasks.report.render_json import render_json
from prb_tasks.report.render_md import render_markdown
from prb_tasks.report.render_text import render_text
from prb_tasks.report.runs import NOT_PAIRWISE

FORMATS = ("table", "markdown", "json")


@dataclass
class Outcome:
    """What ``prb compare`` prints: ``text`` on stdout, ``notes`` on stderr."""

    text: str
    notes: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    report: Report | None = None


def _write(path: Path, text: str) -> Path:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise PRBError(f"prb compare: cannot write {path}: {exc.strerror or exc}") from None
    return path


def write_report(report: Report, out: Path, charts: bool = True) -> list[Path]:
    """Write report.md, report.json, report.html and the chart PNGs into ``out``."""
    from prb_tasks.report.render_html import render_html

    if out.exists() and not out.is_dir():
        raise PRBError(f"prb compare: --out {out} is a file; give a folder for the report")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PRBError(f"prb compare: cannot create the folder {out}: {exc.strerror or exc}") from None
    if charts:
        from prb_tasks.report.charts import draw_charts

        report.notes += draw_charts(report, out)
    html = render_html(report, out)
    written = [_write(out / "report.html", html), _write(out / "report.md", render_markdown(report)),
               _write(out / "report.json", render_json(report))]
    return written + [out / file for made in report.charts.values() for _, file in made]


def compare(paths: list[Path], out: Path | None = None, tasks: list[str] | None = None,
            fmt: str = "table", charts: bool = True, labels: list[str] | None = None,
            names_file: Path | None = None) -> Outcome:
    """Compare every run under ``paths``.

    Args:
        paths: lm-eval output folders or results files.
        out: folder for report.md / report.json / report.html / charts (None: print only).
        tasks: keep only these task families (a judge task's name also selects its benchmark's
            other families of the same setting, e.g. its ``_scalar`` twin).
        fmt: what to print: ``table`` (short), ``markdown`` (report.md) or ``json`` (report.json).
        charts: draw the charts (needs matplotlib).
        labels: ``RUN=NAME`` strings: show those runs as NAME everywhere.
        names_file: a file of ``RUN=NAME`` lines.
    """
    from prb_tasks.report.names import read_names

    if fmt not in FORMATS:
        raise PRBError(f"prb compare: unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    report = build_report(paths, tasks, read_names(labels or [], names_file))
    if report.sections:
        from prb_tasks.report.predicts import predicts

        report.predicts = predicts(paths, [(s.title, s.per_user) for s in report.sections])
    written = write_report(report, out, charts) if out is not None and report.sections else []
    if fmt == "json":
        text = render_json(report)
    elif fmt == "markdown":
        text = render_markdown(report)
    else:
        text = render_text(report)
    return Outcome(text, list(report.notes), written, report)


def empty_line(paths: list[Path], left_out: int = 0) -> str:
    """The one line for folders that hold no finished run of a pairwise prb task.

    Args:
        paths: the folders given.
        left_out: how many finished runs were read and left out as not pairwise (their
            notes are printed above the line).
    """
    where = ", ".join(str(p) for p in paths)
    if left_out:
        return (f"prb compare: the {left_out} finished run{'s' if left_out > 1 else ''} of prb tasks under {where} "
                f"{'are' if left_out > 1 else 'is'} not pairwise (above); compare reads pairwise verdicts and "
                "scores: for best-of-N runs use prb bon or prb validity")
    return (f"prb compare: no finished runs of prb tasks under {where}; run prb eval with "
            "--output_path DIR --log_samples and give DIR")


def run_command(args: Any) -> int:
    """``prb compare`` from parsed arguments: print, write, and return the exit code.

    Args:
        args: argparse namespace with ``paths``, ``out``, ``task``, ``format``, ``no_charts``.
    """
    try:
        outcome = compare(args.paths, args.out, args.task, args.format, charts=not args.no_charts,
                          labels=getattr(args, "label", None), names_file=getattr(args, "names", None))
        for note in outcome.notes:
            print(f"prb compare: {note}", file=sys.stderr)
        if outcome.report is not None and not outcome.report.sections:
            # Nothing to compare is a mistake in what was given: a script must not see success.
            print(empty_line(args.paths, sum(NOT_PAIRWISE in note for note in outcome.notes)), file=sys.stderr)
            return 2
        print(outcome.text, flush=True)
        if outcome.written:
            html = outcome.written[0]
            print(f"wrote {html} ({html.stat().st_size / 1e6:.1f} MB), report.md, report.json and "
                  f"{len(outcome.written) - 3} charts in {html.parent}", file=sys.stderr)
    except (PRBError, KeyboardInterrupt, BrokenPipeError) as exc:
        return stopped("prb compare", exc)
    return 0


def stopped(command: str, exc: BaseException) -> int:
    """Exit code of a report command stopped by a user error, Ctrl-C or a closed pipe.

    Args:
        command: the command's name for the message (``prb compare``).
        exc: what stopped it: a :class:`PRBError` (its one line is printed, exit 2),
            ``KeyboardInterrupt`` (130) or ``BrokenPipeError`` (0).
    """
    if isinstance(exc, BrokenPipeError):
        # `... | head` closed the pipe: stop quietly, and keep Python's final flush of
        # stdout from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if isinstance(exc, KeyboardInterrupt):
        print(f"{command}: interrupted; the files it writes may be incomplete, run it again", file=sys.stderr)
        return 130
    print(str(exc), file=sys.stderr)
    return 2

"""What every chart of the reports shares: matplotlib set up headless, the title line,
saving in every format, short model names and point labels that keep clear of each other.

Used by :mod:`prb_tasks.report.charts` (``prb compare``), :mod:`prb_tasks.report.charts_kcurve`
and the ``prb validity`` outputs; it imports none of them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from prb_tasks.report.build import Section
from prb_tasks.report.formatting import short_label
from prb_tasks.report.settings import describe as describe_setting

DPI = 300
FORMATS = ("svg", "pdf", "png")
PERCENT = (0.0, 100.0)


def short_name(label: str, width: int = 40) -> str:
    """A model label cut to ``width`` characters for a chart."""
    return short_label(label, width)


def _where(section: Section) -> str:
    """The kind of data, without a local path (a figure must not carry one)."""
    source = section.source
    if source == "sample":
        return "bundled synthetic sample"
    if source.startswith("local:"):
        return "local copy"
    if source.startswith("bundled:"):
        return "bundled example data"
    return "HF hub"


def chart_title(what: str, section: Section) -> str:
    """``Accuracy: personalized_rb, question only (HF hub)``."""
    import textwrap

    benchmark = section.entries[0].family.benchmark if section.entries else ""
    # Wrapped, so a long setting does not stretch the figure and shrink everything else.
    return textwrap.fill(f"{what}: {benchmark}, {describe_setting(section.setting)} ({_where(section)})", 72)


def pyplot() -> Any:
    """matplotlib's pyplot on the headless Agg backend, with the reports' text settings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Text stays text in SVG and PDF (TrueType), so figures can be edited and searched.
    matplotlib.rcParams.update({"svg.fonttype": "none", "pdf.fonttype": 42, "font.size": 9})
    return plt


def save_figure(fig: Any, stem: Path) -> None:
    """Write ``fig`` as ``stem``.svg, .pdf and .png (300 dpi), then close it."""
    if not getattr(fig, "_prb_laid_out", False) and not fig.legends:
        fig.tight_layout()
    for fmt in FORMATS:
        fig.savefig(stem.with_suffix(f".{fmt}"), dpi=DPI if fmt == "png" else None, bbox_inches="tight")
    pyplot().close(fig)


def label_points(ax: Any, points: list[tuple[float, float, str]], log_x: bool = False) -> None:
    """One label per place: models at the same point (ties) are listed in one label,
    and labels of points close together are moved apart vertically."""
    groups: dict[tuple[float, float], list[str]] = {}
    for x, y, name in points:
        gx = round(math.log10(x), 2) if log_x and x > 0 else round(x, 1)
        groups.setdefault((gx, round(y, 1)), []).append(name)
    placed: list[tuple[float, float, float]] = []  # x, y, offset in points
    for (gx, gy), names in sorted(groups.items(), key=lambda item: (item[0][1], item[0][0])):
        x = next(px for px, py, n in points if n == names[0])
        y = next(py for px, py, n in points if n == names[0])
        offset = 4.0
        for px, py, po in placed:
            near_x = abs(math.log10(max(px, 1e-12)) - math.log10(max(x, 1e-12))) < 0.3 if log_x else abs(px - x) < 8
            if near_x and abs(py - y) < 4:
                offset = max(offset, po + 11 * len(names))
        placed.append((x, y, offset))
        top = y > 85  # near the top edge the label goes below the point, clear of the title
        left = not log_x and x > 75  # near the right edge it goes to the left, inside the plot
        ax.annotate("\n".join(names), (x, y), textcoords="offset points",
                    xytext=(-6 if left else 6, -offset if top else offset), fontsize=7,
                    va="top" if top else "bottom", ha="right" if left else "left",
                    arrowprops={"arrowstyle": "-", "color": "#999", "lw": 0.5} if offset > 4 else None)

"""PNG charts of a report section (matplotlib, from the ``report`` extra).

Judges are drawn as circles in blue, scalar RMs as squares in orange, in every chart.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from prb_tasks.report.build import Report, Section
from prb_tasks.report.formatting import known
from prb_tasks.report.tables import short_subset

MISSING = "charts skipped: matplotlib is not installed (pip install \"prb-tasks[report]\")"
STYLE = {"judge": ("#1f6fb4", "o", "generative judge"), "scalar": ("#e07b12", "s", "scalar RM")}
DPI = 110


def _short(label: str, width: int = 40) -> str:
    """``prb-judge (model=openai/gpt-4o-mini)`` -> ``openai/gpt-4o-mini``; long names keep both ends."""
    head, _, rest = label.partition(" (")
    if rest:
        inner, _, tail = rest.partition(")")
        values = ", ".join(part.split("=", 1)[-1] for part in inner.split(", "))
        label = values + tail
    if len(label) <= width:
        return label
    keep = width - 1
    return label[: keep // 3] + "…" + label[-(keep - keep // 3):]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _legend(ax: Any, kinds: set[str]) -> None:
    plt = _plt()
    handles = [plt.Line2D([], [], color=c, marker=m, linestyle="", label=t)
               for k, (c, m, t) in STYLE.items() if k in kinds]
    ax.legend(handles=handles, loc="best", fontsize=8, frameon=False)


def _save(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    _plt().close(fig)


def accuracy(section: Section, path: Path) -> bool:
    rows = sorted([s for s in section.summaries if s.acc], key=lambda s: s.acc.value)
    if not rows:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * len(rows)))
    for y, s in enumerate(rows):
        color, marker, _ = STYLE[s.kind]
        low, high = s.acc.low, s.acc.high
        if known(low):
            ax.plot([100 * low, 100 * high], [y, y], color=color, linewidth=2, alpha=0.6)
        ax.plot(100 * s.acc.value, y, marker=marker, color=color, markersize=8)
        ax.annotate(f"{100 * s.acc.value:.1f}", (100 * s.acc.value, y), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=7)
    ax.set_yticks(range(len(rows)), [_short(s.label) for s in rows], fontsize=8)
    ax.axvline(50, color="#999", linestyle=":", linewidth=1)
    ax.set_xlabel("accuracy % (95% bootstrap interval over pairs)")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_title(f"Accuracy: {section.title}", fontsize=10)
    _legend(ax, {s.kind for s in rows})
    _save(fig, path)
    return True


def _frontier(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points no other point beats on both cost (lower) and accuracy (higher)."""
    best: list[tuple[float, float]] = []
    for cost, acc in sorted(points, key=lambda p: (p[0], -p[1])):
        if not best or acc > best[-1][1]:
            best.append((cost, acc))
    return best


def cost_frontier(section: Section, path: Path) -> bool:
    rows = [s for s in section.summaries if s.acc and known(s.cost.usd_per_1k_pairs)]
    if not rows:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    points = []
    for s in rows:
        color, marker, _ = STYLE[s.kind]
        cost = max(s.cost.usd_per_1k_pairs or 0.0, 1e-6)
        points.append((cost, 100 * s.acc.value))
        ax.plot(cost, 100 * s.acc.value, marker=marker, color=color, markersize=8)
        ax.annotate(_short(s.label, 30), (cost, 100 * s.acc.value), textcoords="offset points", xytext=(5, 4),
                    fontsize=7)
    line = _frontier(points)
    ax.plot([p[0] for p in line], [p[1] for p in line], color="#555", linestyle="--", linewidth=1,
            label="cost frontier")
    ax.set_xscale("log")
    from matplotlib.ticker import FuncFormatter

    money = FuncFormatter(lambda x, _: f"${x:.3g}")
    ax.xaxis.set_major_formatter(money)
    ax.xaxis.set_minor_formatter(money)
    ax.tick_params(axis="x", which="minor", labelsize=7)
    ax.margins(x=0.15, y=0.1)
    ax.set_xlabel("$ per 1,000 pairs (log scale; cached answers at their original price)")
    ax.set_ylabel("accuracy %")
    ax.set_title(f"Accuracy vs cost: {section.title}", fontsize=10)
    ax.legend(loc="best", fontsize=8, frameon=False)
    _save(fig, path)
    return True


def subset_heatmap(section: Section, path: Path) -> bool:
    rows = [s for s in section.summaries if s.subsets]
    names: list[str] = []
    for s in rows:
        names += [g.value for g in s.subsets if g.value not in names]
    if not rows or not names:
        return False
    plt = _plt()
    grid = [[next((100 * g.acc for g in s.subsets if g.value == n), math.nan) for n in names] for s in rows]
    fig, ax = plt.subplots(figsize=(2.8 + 1.3 * len(names), 1.2 + 0.45 * len(rows)))
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    for i, line in enumerate(grid):
        for j, v in enumerate(line):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(names)), [short_subset(n) for n in names], fontsize=8)
    ax.set_yticks(range(len(rows)), [f"{_short(s.label, 34)} ({'J' if s.kind == 'judge' else 'RM'})" for s in rows],
                  fontsize=8)
    fig.colorbar(image, ax=ax, label="accuracy %")
    ax.set_title(f"Accuracy per subset: {section.setting}", fontsize=10)
    _save(fig, path)
    return True


def consistency(section: Section, path: Path) -> bool:
    rows = [s for s in section.summaries
            if s.kind == "judge" and s.acc and known(s.metrics.get("consistency"))]
    if not rows:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    color, marker, _ = STYLE["judge"]
    for s in rows:
        x, y = 100 * (s.metrics["consistency"] or 0.0), 100 * s.acc.value
        ax.plot(x, y, marker=marker, color=color, markersize=8)
        ax.annotate(_short(s.label, 30), (x, y), textcoords="offset points", xytext=(5, 4), fontsize=7)
    ax.set_xlabel("consistency % (same response preferred in both orders)")
    ax.set_ylabel("accuracy %")
    ax.margins(x=0.25, y=0.15)
    ax.set_title(f"Judges: consistency vs accuracy ({section.setting})", fontsize=10)
    _save(fig, path)
    return True


def length_bias(section: Section, path: Path) -> bool:
    rows = [s for s in section.summaries if known(s.metrics.get("picks_longer"))]
    if not rows:
        return False
    plt = _plt()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 1.4 + 0.45 * len(rows)), sharey=True)
    for y, s in enumerate(rows):
        color, marker, _ = STYLE[s.kind]
        left.barh(y, 100 * (s.metrics["picks_longer"] or 0.0), color=color, alpha=0.75)
        longer, shorter = s.metrics.get("acc_chosen_longer"), s.metrics.get("acc_chosen_shorter")
        if known(longer) and known(shorter):
            right.plot([100 * shorter, 100 * longer], [y, y], color="#aaa", linewidth=1)
        if known(longer):
            right.plot(100 * longer, y, marker=">", color=color, markersize=8)
        if known(shorter):
            right.plot(100 * shorter, y, marker="<", color=color, markersize=8, fillstyle="none")
    left.axvline(50, color="#555", linestyle=":", linewidth=1)
    left.set_xlim(0, 100)
    left.set_xlabel("picks that are the longer response %\n(50 = no length bias)")
    left.set_yticks(range(len(rows)), [_short(s.label, 34) for s in rows], fontsize=8)
    right.margins(x=0.2)
    right.set_xlabel("accuracy % when the chosen response is\n▶ the longer one, ◁ the shorter one")
    fig.suptitle(f"Length bias: {section.setting}", fontsize=10)
    _save(fig, path)
    return True


CHARTS = (
    ("accuracy", "Accuracy with 95% intervals", accuracy),
    ("cost", "Accuracy vs cost per 1,000 pairs", cost_frontier),
    ("subsets", "Accuracy per subset", subset_heatmap),
    ("consistency", "Judges: consistency vs accuracy", consistency),
    ("length", "Length bias", length_bias),
)


def draw_charts(report: Report, folder: Path) -> list[str]:
    """Write every chart that has data into ``folder``; record them in ``report.charts``.

    Returns:
        Notes for the user (one line if matplotlib is missing).
    """
    try:
        _plt()
    except ImportError:
        return [MISSING]
    folder.mkdir(parents=True, exist_ok=True)
    for section in report.sections:
        made = []
        for name, title, draw in CHARTS:
            file = f"{section.slug}_{name}.png"
            if draw(section, folder / file):
                made.append((title, file))
        report.charts[section.slug] = made
    return []

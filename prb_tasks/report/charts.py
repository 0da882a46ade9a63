"""Charts of a report section, fit for print (matplotlib, from the ``report`` extra).

Every chart is written three times: SVG and PDF (vector, text kept as text so a
figure can be edited and searched) and a 300-dpi PNG. Judges are blue circles, scalar
RMs orange squares, in every chart; every chart has labelled axes and a legend;
percentage axes stay within 0-100; titles name the benchmark, the setting and the kind
of data, never a local path. Points that coincide (tied models) share one label.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from prb_tasks.common.install_hint import pip_install
from prb_tasks.report.build import Report, Section
from prb_tasks.report.chart_helpers import PERCENT, chart_title, label_points, pyplot, save_figure, short_name
from prb_tasks.report.formatting import known
from prb_tasks.report.summary import Summary
from prb_tasks.report.tables import short_subset
from prb_tasks.stats.pairs import Interval

MISSING = f"charts skipped: matplotlib is not installed ({pip_install('report')})"
STYLE = {"judge": ("#1f6fb4", "o", "generative judge"), "scalar": ("#e07b12", "s", "scalar RM")}
SUBSET_MARKERS = ("^", "v", "D", "P", "X", "<", ">", "h")


def _kind_handles(kinds: set[str]) -> list[Any]:
    plt = pyplot()
    return [plt.Line2D([], [], color=c, marker=m, linestyle="", label=t)
            for k, (c, m, t) in STYLE.items() if k in kinds]


def _acc(summary: Summary) -> Interval:
    """The accuracy of a model the chart shows (those without one are left out first)."""
    assert summary.acc is not None
    return summary.acc


def accuracy(section: Section, stem: Path) -> bool:
    """Headline: accuracy with its 95% interval per model, overall and per subset."""
    rows = sorted([s for s in section.summaries if s.acc and s.id not in section.set_apart],
                  key=lambda s: _acc(s).value)
    if not rows:
        return False
    plt = pyplot()
    subsets: list[str] = []
    for s in rows:
        subsets += [g.value for g in s.subsets if g.value not in subsets]
    if len(subsets) < 2:
        subsets = []
    band = 0.7 / max(len(subsets), 1)
    fig, ax = plt.subplots(figsize=(7.5, 1.4 + (0.35 + 0.22 * len(subsets)) * len(rows)))
    for y, s in enumerate(rows):
        color, marker, _ = STYLE[s.kind]
        acc = _acc(s)
        if known(acc.low):
            ax.plot([100 * acc.low, 100 * acc.high], [y, y], color=color, linewidth=2.5, alpha=0.7)
        ax.plot(100 * acc.value, y, marker=marker, color=color, markersize=8, clip_on=False)
        # The value sits beside the interval (not above it, where the subsets are).
        high = 100 * (acc.high if known(acc.high) else acc.value)
        low = 100 * (acc.low if known(acc.low) else acc.value)
        label = dict(textcoords="offset points", fontsize=7, fontweight="bold")
        if high < 88:
            ax.annotate(f"{100 * acc.value:.1f}", (high, y), xytext=(6, 0), ha="left", va="center", **label)
        elif low > 12:
            ax.annotate(f"{100 * acc.value:.1f}", (low, y), xytext=(-6, 0), ha="right", va="center", **label)
        else:
            # An interval spanning the whole axis leaves no room beside it: the value goes
            # under its marker rather than over the model names.
            ax.annotate(f"{100 * acc.value:.1f}", (100 * acc.value, y), xytext=(0, -7), ha="center",
                        va="top", **label)
        per = {g.value: g for g in s.subsets}
        for k, name in enumerate(subsets):
            g = per.get(name)
            if g is None:
                continue
            yy = y + 0.16 + band * k * 0.5  # subsets just above their model's overall marker
            if g.low is not None and g.high is not None and known(g.low):
                ax.plot([100 * g.low, 100 * g.high], [yy, yy], color=color, linewidth=0.8, alpha=0.5)
            ax.plot(100 * g.acc, yy, marker=SUBSET_MARKERS[k % len(SUBSET_MARKERS)], color=color,
                    markersize=4.5, fillstyle="none", linestyle="", clip_on=False)
    ax.set_yticks(range(len(rows)), [short_name(s.label) for s in rows])
    ax.axvline(50, color="#999", linestyle=":", linewidth=1)
    ax.set_xlim(*PERCENT)
    ax.set_xlabel("accuracy % (95% bootstrap interval over pairs; dotted line: chance)")
    ax.set_ylabel("model")
    ax.set_ylim(-0.6, len(rows) - 0.1 + (0.2 if subsets else 0))
    ax.set_title(chart_title("Accuracy", section), fontsize=10)
    handles = _kind_handles({s.kind for s in rows})
    handles += [plt.Line2D([], [], color="#555", marker=SUBSET_MARKERS[k % len(SUBSET_MARKERS)], fillstyle="none",
                           linestyle="", markersize=5, label=f"subset: {short_subset(name)}")
                for k, name in enumerate(subsets)]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.4 / fig.get_figheight(), 1, 1))
    save_figure(fig, stem)
    return True


def _frontier(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points no other point beats on both cost (lower) and accuracy (higher)."""
    best: list[tuple[float, float]] = []
    for cost, acc in sorted(points, key=lambda p: (p[0], -p[1])):
        if not best or acc > best[-1][1]:
            best.append((cost, acc))
    return best


def cost_frontier(section: Section, stem: Path) -> bool:
    """Accuracy against $ per 1,000 pairs; free models (local, $0) sit on their own tick."""
    rows = [s for s in section.summaries if s.acc and known(s.cost.usd_per_1k_pairs) and s.id not in section.set_apart]
    if not rows:
        return False
    plt = pyplot()
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    paid = [usd for s in rows if (usd := s.cost.usd_per_1k_pairs) is not None and usd > 0]
    log = bool(paid)
    # A log axis cannot show $0: free models are drawn one decade left of the cheapest paid one.
    free_x = min(paid) / 10 if paid else 0.0
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    points, named = [], []
    for s in rows:
        color, marker, _ = STYLE[s.kind]
        cost = s.cost.usd_per_1k_pairs or 0.0
        x = cost if cost > 0 else free_x
        y = 100 * _acc(s).value
        points.append((x, y))
        named.append((x, y, short_name(s.label, 30)))
        ax.plot(x, y, marker=marker, color=color, markersize=8, linestyle="", clip_on=False)
    line = _frontier(points)
    ax.plot([p[0] for p in line], [p[1] for p in line], color="#555", linestyle="--", linewidth=1)
    label_points(ax, named, log_x=log)
    if log:
        ax.set_xscale("log")
        low, high = (math.floor(math.log10(free_x if len(paid) < len(rows) else min(paid))),
                     math.ceil(math.log10(max(paid))))
        high = max(high, low + 1)
        ticks = [10.0 ** e for e in range(low, high + 1)]
        ax.set_xlim(10.0 ** low / 1.5, 10.0 ** high * 1.5)
        if len(paid) < len(rows):
            ticks = [t for t in ticks if t > free_x * 1.5] + [free_x]
            ax.axvline(free_x * 3, color="#ccc", linewidth=0.8)
        ax.xaxis.set_major_locator(FixedLocator(sorted(ticks)))
        ax.xaxis.set_major_formatter(FuncFormatter(
            lambda x, _: "$0 (free)" if paid and abs(x - free_x) < free_x * 1e-6 else f"${x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("$ per 1,000 pairs (log scale; cached answers at their original price)")
    else:
        ax.set_xticks([0.0], ["$0 (free)"])
        ax.set_xlim(-1, 1)
        ax.set_xlabel("$ per 1,000 pairs (every model here was free)")
    ax.set_ylim(*PERCENT)
    ax.set_ylabel("accuracy %")
    ax.set_title(chart_title("Accuracy vs cost", section), fontsize=10)
    handles = _kind_handles({s.kind for s in rows})
    handles.append(plt.Line2D([], [], color="#555", linestyle="--",
                              label="cost frontier (no model is cheaper and better)"))
    ax.legend(handles=handles, loc="lower right", fontsize=7, frameon=False)
    save_figure(fig, stem)
    return True


def subset_heatmap(section: Section, stem: Path) -> bool:
    rows = [s for s in section.summaries if s.subsets]
    names: list[str] = []
    for s in rows:
        names += [g.value for g in s.subsets if g.value not in names]
    if not rows or not names:
        return False
    plt = pyplot()
    grid = [[next((100 * g.acc for g in s.subsets if g.value == n), math.nan) for n in names] for s in rows]
    fig, ax = plt.subplots(figsize=(3.2 + 1.3 * len(names), 1.4 + 0.45 * len(rows)))
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    for i, line in enumerate(grid):
        for j, v in enumerate(line):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(names)), [short_subset(n) for n in names])
    ax.set_yticks(range(len(rows)), [f"{short_name(s.label, 34)} ({'J' if s.kind == 'judge' else 'RM'})" for s in rows])
    ax.set_xlabel("subset")
    ax.set_ylabel("model (J = generative judge, RM = scalar RM)")
    fig.colorbar(image, ax=ax, label="accuracy % (colour scale)")
    ax.set_title(chart_title("Accuracy per subset", section), fontsize=10)
    save_figure(fig, stem)
    return True


def consistency(section: Section, stem: Path) -> bool:
    rows = [s for s in section.summaries
            if s.kind == "judge" and s.acc and known(s.metrics.get("consistency"))]
    if not rows:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    color, marker, _ = STYLE["judge"]
    named = []
    for s in rows:
        x, y = 100 * (s.metrics["consistency"] or 0.0), 100 * _acc(s).value
        ax.plot(x, y, marker=marker, color=color, markersize=8, linestyle="", clip_on=False)
        named.append((x, y, short_name(s.label, 30)))
    label_points(ax, named)
    ax.set_xlim(*PERCENT)
    ax.set_ylim(*PERCENT)
    ax.set_xlabel("consistency % (same response preferred in both orders)")
    ax.set_ylabel("accuracy %")
    ax.set_title(chart_title("Judges' consistency vs accuracy", section), fontsize=10)
    ax.legend(handles=_kind_handles({"judge"}), loc="lower right", fontsize=7, frameon=False)
    save_figure(fig, stem)
    return True


def length_bias(section: Section, stem: Path) -> bool:
    rows = [s for s in section.summaries if known(s.metrics.get("picks_longer"))]
    if not rows:
        return False
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 1.9 + 0.45 * len(rows)), sharey=True)
    for y, s in enumerate(rows):
        color, marker, _ = STYLE[s.kind]
        left.barh(y, 100 * (s.metrics["picks_longer"] or 0.0), color=color, alpha=0.75)
        longer, shorter = s.metrics.get("acc_chosen_longer"), s.metrics.get("acc_chosen_shorter")
        if known(longer) and known(shorter):
            right.plot([100 * shorter, 100 * longer], [y, y], color="#aaa", linewidth=1)
        if known(longer):
            right.plot(100 * longer, y, marker=">", color=color, markersize=8, linestyle="", clip_on=False)
        if known(shorter):
            right.plot(100 * shorter, y, marker="<", color=color, markersize=8, fillstyle="none", linestyle="",
                       clip_on=False)
    left.axvline(50, color="#555", linestyle=":", linewidth=1)
    left.set_xlim(*PERCENT)
    right.set_xlim(*PERCENT)
    left.set_xlabel("picks that are the longer response %\n(dotted: 50 = no length preference)")
    left.set_yticks(range(len(rows)), [short_name(s.label, 34) for s in rows])
    left.set_ylabel("model")
    right.set_xlabel("accuracy % when the chosen response is\nthe longer one / the shorter one")
    handles = _kind_handles({s.kind for s in rows})
    handles += [plt.Line2D([], [], color="#555", marker=">", linestyle="", label="chosen is the longer response"),
                plt.Line2D([], [], color="#555", marker="<", fillstyle="none", linestyle="",
                           label="chosen is the shorter response")]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7, frameon=False)
    fig.suptitle(chart_title("Length bias", section), fontsize=10)
    fig.tight_layout(rect=(0, 0.35 / fig.get_figheight(), 1, 1))
    save_figure(fig, stem)
    return True


def k_curves(section: Section, stem: Path) -> bool:
    """Few-shot sections: accuracy per support size k (:mod:`prb_tasks.report.charts_kcurve`)."""
    from prb_tasks.report.charts_kcurve import k_curves as draw

    return draw(section, stem)


def per_user(section: Section, stem: Path) -> bool:
    """Data with users: each model's per-user accuracy as an ECDF (:mod:`prb_tasks.report.charts_peruser`)."""
    from prb_tasks.report.charts_peruser import per_user_ecdf

    return per_user_ecdf(section, stem)


def soft_confidence(section: Section, stem: Path) -> bool:
    """Judges run with ``logprobs=``: calibration and coverage (:mod:`prb_tasks.report.charts_soft`)."""
    from prb_tasks.report.charts_soft import confidence as draw

    return draw(section, stem)


CHARTS = (
    ("kcurve", "Few-shot k-curves: accuracy per support size k, 95% intervals over users", k_curves),
    ("accuracy", "Accuracy with 95% intervals, overall and per subset", accuracy),
    ("cost", "Accuracy vs cost per 1,000 pairs", cost_frontier),
    ("subsets", "Accuracy per subset", subset_heatmap),
    ("consistency", "Judges: consistency vs accuracy", consistency),
    ("length", "Length bias", length_bias),
    ("peruser", "Per-user accuracy: share of users at or below each accuracy (ECDF)", per_user),
    ("confidence", "Judges' soft verdicts: reliability diagram and accuracy vs coverage", soft_confidence),
)


def draw_charts(report: Report, folder: Path) -> list[str]:
    """Write every chart that has data into ``folder`` (SVG, PDF, PNG); record them in
    ``report.charts`` as (title, PNG file name); the SVG and PDF sit beside it.

    Returns:
        Notes for the user (one line if matplotlib is missing).
    """
    try:
        pyplot()
    except ImportError:
        return [MISSING]
    folder.mkdir(parents=True, exist_ok=True)
    for section in report.sections:
        made = []
        for name, title, draw in CHARTS:
            stem = folder / f"{section.slug}_{name}"
            if draw(section, stem):
                made.append((title, f"{stem.name}.png"))
        report.charts[section.slug] = made
    return []

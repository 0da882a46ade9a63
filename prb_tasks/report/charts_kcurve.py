"""The few-shot k-curve chart: each method's accuracy against the number of support
pairs k, with 95% intervals from resampling users (:mod:`prb_tasks.fewshot.metrics`).

Drawn for a section whose pairs are few-shot queries (subsets named ``NN-shot``, as the
``*_fewshot`` tasks write them); k sits on equally spaced positions (0, 1, 2, 4, 8, 16),
the spacing the area under the curve (``aukc``) uses.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from prb_tasks.fewshot.metrics import curve_area, k_curve
from prb_tasks.report.build import Section
from prb_tasks.report.chart_helpers import PERCENT, chart_title, pyplot, save_figure, short_name

_SHOT = re.compile(r"(\d+)-shot")
#: One colour per model (matplotlib's tab10, colour-blind friendlier than random hues);
#: the marker and line style say the kind, as in the other charts' legend.
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")
_KIND = {"judge": ("in-context judge", "o", "--"), "scalar": ("method", "s", "-")}


def _curves(section: Section) -> list[tuple[str, str, list]]:
    """(label, kind, k-curve points) of every logged model whose pairs are few-shot queries."""
    out = []
    for entry in section.entries:
        if not entry.logged or not entry.subset:
            continue
        found = [_SHOT.fullmatch(s) for s in entry.subset]
        shots = [m for m in found if m is not None]
        if len(shots) != len(found):
            continue
        users = entry.user if len(entry.user) == len(entry.keys) else [None] * len(entry.keys)
        outcomes = [(int(m.group(1)), u or key, float(v))
                    for m, u, key, v in zip(shots, users, entry.keys, np.asarray(entry.score, float))]
        out.append((entry.label, entry.kind, k_curve(outcomes)))
    return out


def k_curves(section: Section, stem: Path) -> bool:
    """Accuracy per k with user-resampled intervals, one line per model; False when the
    section has no few-shot runs."""
    curves = _curves(section)
    if not curves:
        return False
    plt = pyplot()
    ks = sorted({p.k for _, _, points in curves for p in points})
    where = {k: i for i, k in enumerate(ks)}
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for n, (label, kind, points) in enumerate(sorted(curves, key=lambda c: -curve_area(c[2]))):
        color = _PALETTE[n % len(_PALETTE)]
        what, marker, dash = _KIND.get(kind, _KIND["scalar"])
        shift = (n - (len(curves) - 1) / 2) * 0.04  # side by side, so intervals do not hide each other
        x = [where[p.k] + shift for p in points]
        y = [100 * p.accuracy.value for p in points]
        low = [100 * (p.accuracy.value - p.accuracy.low) for p in points]
        high = [100 * (p.accuracy.high - p.accuracy.value) for p in points]
        ax.errorbar(x, y, yerr=[low, high], color=color, marker=marker, linestyle=dash, linewidth=1.3,
                    markersize=5, capsize=2.5, clip_on=False,
                    label=f"{short_name(label, 44)} ({what}; aukc {100 * curve_area(points):.1f})")
    ax.axhline(50, color="#999", linestyle=":", linewidth=1, label="chance (50%)")
    ax.set_xticks(range(len(ks)), [str(k) for k in ks])
    ax.set_xlim(-0.3, len(ks) - 0.7)
    ax.set_ylim(*PERCENT)
    ax.set_xlabel("k: the user's labelled support pairs the method adapted to (equally spaced)")
    ax.set_ylabel("accuracy % on the user's fixed query pairs\n(bars: 95% interval, resampling users)")
    ax.set_title(chart_title("Few-shot k-curves", section), fontsize=10)
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    save_figure(fig, stem)
    return True

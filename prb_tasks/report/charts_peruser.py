"""The per-user accuracy chart: for each model, the share of users at or below each accuracy
(an empirical cumulative distribution, ECDF), so the users a model serves badly show as the
left tail that a mean hides.

Drawn for a section whose data names its users (:mod:`prb_tasks.report.peruser`); users with
fewer pairs than the threshold are left out, and the legend says how many users each line holds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from prb_tasks.report.build import Section
from prb_tasks.report.chart_helpers import PERCENT, chart_title, pyplot, save_figure, short_name
from prb_tasks.report.charts_kcurve import _PALETTE
from prb_tasks.report.formatting import pct, value

_DASHES = ("-", "--", "-.", ":")


def per_user_ecdf(section: Section, stem: Path) -> bool:
    """One step line per model: x the user's accuracy, y the share of users at or below it.

    Returns False when the section has no users with enough pairs.
    """
    block = section.per_user
    if block is None or not any(m.accuracies for m in block.spreads):
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    shown = [m for m in block.spreads if m.accuracies]
    for n, m in enumerate(sorted(shown, key=lambda m: -(value(m.spread.median) or 0.0))):
        acc = np.sort(100 * np.array(m.accuracies))
        share = 100 * np.arange(1, len(acc) + 1) / len(acc)
        # The step starts at 0% of users left of the lowest user, so every line spans 0-100.
        ax.step(np.concatenate([[acc[0]], acc]), np.concatenate([[0.0], share]), where="post",
                color=_PALETTE[n % len(_PALETTE)], linestyle=_DASHES[(n // len(_PALETTE)) % len(_DASHES)],
                linewidth=1.6, label=f"{short_name(m.label, 44)} (median {pct(value(m.spread.median))}%, "
                                     f"{m.spread.users} users)")
    ax.axvline(100 * block.chance, color="#999", linestyle=":", linewidth=1,
               label=f"chance ({pct(block.chance, 0)}%): users left of it are served worse than a coin")
    ax.axhline(10, color="#bbb", linestyle="--", linewidth=0.8, label="10% of users (the worst decile lies below)")
    ax.set_xlim(*PERCENT)
    ax.set_ylim(*PERCENT)
    ax.set_xlabel(f"one user's accuracy % (users with at least {block.min_pairs} pairs; "
                  f"{max(m.spread.too_few for m in block.spreads)} with fewer left out)")
    ax.set_ylabel("users at or below that accuracy %\n(lower-right is better)")
    ax.set_title(chart_title("Per-user accuracy (ECDF over users)", section), fontsize=10)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    save_figure(fig, stem)
    return True

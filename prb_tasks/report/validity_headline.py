"""``prb validity``'s headline: the measured correlation beside the published ranges, and
the share of reward-model pairs whose order flips downstream.

The published numbers (:data:`prb_tasks.report.published_ranges.PUBLISHED`) measure other models on
other data: they say what range is usual, not what this run should get.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from prb_tasks.report.published_ranges import PUBLISHED
from prb_tasks.report.validity import Validity
from prb_tasks.stats.flips import Flips, flips


def model_flips(report: Validity) -> Flips:
    """Pairs of models ordered one way by accuracy and the other by downstream gain."""
    acc = np.array([m.benchmark.mean for m in report.models])  # type: ignore[union-attr]
    gain = np.array([m.downstream.mean for m in report.models])  # type: ignore[union-attr]
    return flips(acc, gain)


def _measured(report: Validity, name: str) -> str:
    e = report.measures.get(name)
    if e is None or e.value is None or not np.isfinite(e.value):
        return f"{name} -"
    ci = "" if e.by_models is None else f" (95% CI over {len(report.models)} models {e.by_models.low:.2f} to " \
                                       f"{e.by_models.high:.2f}, {report.iters} resamples of the models)"
    return f"{name} {e.value:.2f}{ci}"


def headline(report: Validity) -> list[str]:
    """Sentences: measured correlations with their intervals over models, the published ranges
    beside them, and the share of model pairs whose order flips downstream."""
    f = model_flips(report)
    share = "-" if f.share is None else f"{100 * f.share:.0f}%"
    lines = [f"measured: {_measured(report, 'kendall')}; {_measured(report, 'spearman')}",
             *(f"published: {p.measure} {p.value}: {p.what} ({p.source})" for p in PUBLISHED),
             f"order flips downstream: {f.flipped} of the {f.ordered} model pairs that accuracy and gain both order "
             f"({share}; {f.pairs} pairs in all): there, picking the more accurate model picks the worse one "
             "downstream"]
    return lines


def headline_data(report: Validity) -> dict[str, object]:
    """The headline for validity.json."""
    f = model_flips(report)
    return {"published": [asdict(p) for p in PUBLISHED],
            "flips": {"flipped": f.flipped, "ordered": f.ordered, "pairs": f.pairs, "share": f.share}}

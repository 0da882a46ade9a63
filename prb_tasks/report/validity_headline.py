"""``prb validity``'s headline: the measured correlation beside the published ranges, and
the share of reward-model pairs whose order flips downstream.

The published numbers are facts from the papers (checked 2026-12-05); they measure other
models on other data, so they say what range is usual, not what this run should get.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from prb_tasks.report.validity import Validity
from prb_tasks.stats.flips import Flips, flips


@dataclass(frozen=True)
class Published:
    """One published figure for how well a ranking predicts another."""

    measure: str
    value: str
    what: str
    source: str


PUBLISHED = (
    Published("kendall", "0.08-0.31", "personalized RM accuracy vs downstream behaviour",
              "The Reward Model Selection Crisis in Personalized Alignment, arXiv 2512.23067"),
    Published("spearman", "0.26-0.37", "benchmark accuracy vs Best-of-N / PPO downstream",
              "Personalized RewardBench (its own downstream study)"),
    Published("kendall", "0.04 mean, 57% near zero or negative",
              "one user's model ranking vs the aggregate ranking, 115 Chatbot Arena users",
              "Personalized Benchmarking: Evaluating LLMs by Individual Preferences, ACL Findings 2026"),
)


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

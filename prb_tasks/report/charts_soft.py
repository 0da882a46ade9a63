"""The confidence chart of judges run with soft verdicts (``logprobs=``): a reliability
diagram and accuracy against coverage, one line per judge.

Left: the judge's pairs binned by confidence (:data:`prb_tasks.scoring.soft.BINS` bins over
50-100%), each bin's accuracy against its mean confidence; on the diagonal a judge is as
right as it is sure. Right: accuracy of the soft verdicts on the surest share of the pairs
(abstaining on the rest), from 10% to all of them. Pairs are those with a soft verdict in
both orders (:mod:`prb_tasks.scoring.soft`); the legend gives each judge's ECE and pairs.
"""

from __future__ import annotations

from pathlib import Path

from prb_tasks.replies.soft_verdict import read_mark
from prb_tasks.report.build import Section
from prb_tasks.report.chart_helpers import PERCENT, chart_title, pyplot, save_figure, short_name
from prb_tasks.report.outcomes import Entry
from prb_tasks.scoring.soft import SoftPair, accuracy_at_coverage, reliability, soft_pairs

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
COVERAGE_STEPS = tuple(range(10, 101, 10))


def entry_soft_pairs(entry: Entry) -> tuple[list[SoftPair], int]:
    """A judge's pairs with a soft score, and its pairs in all, from its logged replies.

    Args:
        entry: one model's per-judgment outcomes (its ``j_text`` hold the marked replies).
    """
    if entry.kind != "judge" or not entry.logged:
        return [], 0
    items = []
    for pair, position, text in zip(entry.j_pair, entry.j_pos, entry.j_text):
        soft = read_mark(text)
        items.append((entry.keys[int(pair)], (str(position), soft.p_first if soft is not None else None)))
    return soft_pairs(items)


def confidence(section: Section, stem: Path) -> bool:
    """Reliability diagram and accuracy-versus-coverage curve; False when no judge has soft verdicts."""
    judges = [(e, pairs) for e in section.entries for pairs in [entry_soft_pairs(e)[0]] if pairs]
    if not judges:
        return False
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.6))
    left.plot(PERCENT, PERCENT, color="#999", linestyle=":", linewidth=1, label="as right as it is sure")
    right.axhline(50, color="#999", linestyle=":", linewidth=1, label="chance (50%)")
    for n, (entry, pairs) in enumerate(judges):
        color = _PALETTE[n % len(_PALETTE)]
        bins = reliability(pairs)
        ece = sum(b.pairs * abs(b.accuracy - b.confidence) for b in bins) / len(pairs)
        name = f"{short_name(entry.label, 36)} (ECE {100 * ece:.1f}, {len(pairs)} pairs)"
        left.plot([100 * b.confidence for b in bins], [100 * b.accuracy for b in bins], color=color, marker="o",
                  linewidth=1.3, label=name, clip_on=False)
        for b in bins:
            left.annotate(str(b.pairs), (100 * b.confidence, 100 * b.accuracy), textcoords="offset points",
                          xytext=(4, -9), fontsize=6, color=color)
        right.plot(COVERAGE_STEPS, [100 * accuracy_at_coverage(pairs, q) for q in COVERAGE_STEPS], color=color,
                   marker="o", linewidth=1.3, markersize=4, label=short_name(entry.label, 36), clip_on=False)
    left.set_xlim(50, 100)
    left.set_ylim(*PERCENT)
    left.set_xlabel("confidence % of the soft verdict (bin mean; numbers: pairs in the bin)")
    left.set_ylabel("accuracy % of the soft verdicts in the bin")
    left.legend(loc="lower right", fontsize=7, frameon=False)
    right.set_xlim(0, 100)
    right.set_ylim(*PERCENT)
    right.set_xlabel("coverage %: the surest share of pairs judged (the rest abstained on)")
    right.set_ylabel("accuracy % on the covered pairs")
    right.legend(loc="lower left", fontsize=7, frameon=False)
    fig.suptitle(chart_title("Judges' confidence: reliability and accuracy vs coverage", section), fontsize=10)
    fig.tight_layout()
    save_figure(fig, stem)
    return True

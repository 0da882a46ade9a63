"""How much accuracy predicts: the fourth per-user block of ``prb compare``, shared with
``prb validity``'s headline.

A benchmark's accuracy matters when it predicts what a reward model does downstream, and
for whom. This block puts what the compared runs measured beside what the field has
published (facts from the papers, checked 2026-12-05; other models on other data, so they say
what range is usual, not what a run should get):

- where the given folders also hold downstream runs (Best-of-N or ``prb rl``), ``prb
  validity``'s headline on them: its correlations with intervals over the models and the
  share of model pairs whose order flips downstream;
- each section's mean per-user vs aggregate rank correlation (the third block) beside the
  published 0.04.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.report.peruser import PerUser
from prb_tasks.report.published_ranges import PUBLISHED, Published
from prb_tasks.stats.pairs import Interval


@dataclass
class UserTau:
    """One section's mean per-user vs aggregate Kendall tau (block 3), for the side-by-side."""

    section: str
    mean_tau: Interval | None
    users: int
    iters: int


@dataclass
class Predicts:
    """Block 4 of a ``prb compare`` report."""

    #: ``prb validity``'s headline on the same folders (empty without downstream runs).
    measured: list[str]
    #: why ``measured`` is empty, else "".
    why_not: str
    published: list[Published] = field(default_factory=lambda: list(PUBLISHED))
    per_user: list[UserTau] = field(default_factory=list)


def predicts(paths: list[Path], blocks: list[tuple[str, PerUser | None]]) -> Predicts:
    """Block 4 for the runs under ``paths``.

    Args:
        paths: the folders ``prb compare`` was given (read again for downstream runs).
        blocks: (section title, its per-user blocks) of the built report, for the per-user rank
            correlations.
    """
    from prb_tasks.report.validity import validity
    from prb_tasks.report.validity_headline import headline

    try:
        measured, why = headline(validity(paths)), ""
    except PRBError as exc:
        measured = []
        why = (f"no accuracy-vs-downstream correlation here ({str(exc).removeprefix('prb validity: ')}); "
               "give prb compare or prb validity folders that also hold Best-of-N or prb rl runs of the same models")
    taus = [UserTau(title, block.agreement.mean_tau, block.agreement.users, block.agreement.iters)
            for title, block in blocks if block is not None and block.agreement is not None]
    return Predicts(measured, why, per_user=taus)


def predicts_lines(block: Predicts | None) -> list[str]:
    """Block 4 as sentences (terminal, report.md, report.html)."""
    if block is None:
        return []
    lines = list(block.measured) or [block.why_not]
    if not block.measured:
        lines += [f"published: {p.measure} {p.value}: {p.what} ({p.source})" for p in block.published]
    for t in block.per_user:
        if t.mean_tau is not None:
            lines.append(f"measured here: mean Kendall tau of each user's ranking vs the aggregate "
                         f"{t.mean_tau.value:.2f} (95% CI {t.mean_tau.low:.2f} to {t.mean_tau.high:.2f}, "
                         f"{t.iters} resamples of {t.users} users) on {t.section}; published 0.04")
    return lines


#: The published figures in a few words each, for the terminal.
BRIEF = ("Kendall 0.08-0.31 (arXiv 2512.23067); Spearman 0.26-0.37 (Personalized RewardBench); one user's ranking vs "
         "the aggregate 0.04, 57% near zero or negative (115 Chatbot Arena users, ACL Findings 2026)")


def predicts_brief(block: Predicts | None) -> list[str]:
    """Block 4 in a few lines for the terminal (report.md / .html have it in full)."""
    if block is None:
        return []
    lines = ["how much accuracy predicts:"]
    lines += [f"  {line}" for line in block.measured] or [
        "  no Best-of-N or prb rl runs of these models here, so no accuracy-vs-downstream correlation "
        "(prb validity computes it)"]
    lines.append(f"  published: {BRIEF}")
    for t in block.per_user:
        if t.mean_tau is not None:
            lines.append(f"  here: mean tau of each user's ranking vs the aggregate {t.mean_tau.value:.2f} "
                         f"({t.mean_tau.low:.2f} to {t.mean_tau.high:.2f}, {t.iters} resamples of {t.users} users)")
    return lines

"""The lines under ``prb eval``'s table for a run with soft verdicts (``logprobs=``).

One block per top-level row that has soft scores: how many pairs have one, the soft accuracy
and calibration error, then accuracy against coverage, so a reader sees at a glance
"right on 90% of the 60% of pairs it is surest of". Metrics: :mod:`prb_tasks.scoring.soft`.
"""

from __future__ import annotations

import math
from typing import Any

from prb_tasks.common.terminal import WIDTH, wrap_units
from prb_tasks.scoring.soft import COVERAGES


def _number(row: dict[str, Any], metric: str) -> float | None:
    value = row.get(f"{metric},none")
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def soft_line(name: str, row: dict[str, Any]) -> str | None:
    """One sentence on a results row's soft verdicts; None when it has none.

    Args:
        name: the task as the table shows it.
        row: the task's (or group's) entry in lm-eval's ``results``.
    """
    soft, cover = _number(row, "soft_acc"), _number(row, "soft_cover")
    if soft is None:
        return None
    ece = _number(row, "ece")
    points = [(q, _number(row, f"acc_cov{q}")) for q in COVERAGES]
    curve = ", ".join(f"{q}%\xa0{100 * v:.1f}" for q, v in points if v is not None)
    share = f"{100 * cover:.0f}% of pairs" if cover is not None else "the pairs"
    calibration = f", ECE {100 * ece:.1f}" if ece is not None else ""
    return (f"{name} soft verdicts ({share} have one in both orders): soft_acc {100 * soft:.1f}{calibration}; "
            f"acc % on the surest {curve}")


def soft_lines(name: str, row: dict[str, Any], width: int = WIDTH) -> list[str]:
    """:func:`soft_line` wrapped to ``width`` columns (a point such as ``60% 88.0`` is never split).

    Args:
        name: the task as the table shows it.
        row: the task's entry in lm-eval's ``results``.
        width: the most columns a line may take.
    """
    line = soft_line(name, row)
    if line is None:
        return []
    return wrap_units(line, width)

"""Number formatting shared by the terminal, Markdown and HTML renderings."""

from __future__ import annotations

import math
from typing import TypeGuard

from prb_tasks.stats.pairs import Interval

DASH = "-"


def known(value: float | None) -> TypeGuard[float]:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def pct(value: float | None, digits: int = 1) -> str:
    """0.6123 -> ``61.2``."""
    return f"{100 * value:.{digits}f}" if known(value) else DASH


def signed_pts(value: float | None) -> str:
    """A difference of accuracies in percentage points: ``+3.1``."""
    return f"{100 * value:+.1f}" if known(value) else DASH


def ci(interval: Interval | None, signed: bool = False) -> str:
    """``55.1-67.0`` (or ``+1.2 to +4.0`` for differences); ``-`` without an interval."""
    if interval is None or not known(interval.low):
        return DASH
    if signed:
        return f"{signed_pts(interval.low)} to {signed_pts(interval.high)}"
    return f"{pct(interval.low)}-{pct(interval.high)}"


def value(interval: Interval | None) -> float | None:
    return interval.value if interval is not None else None


def money(usd: float | None, partial: bool = False) -> str:
    if not known(usd):
        return DASH
    assert usd is not None
    if usd == 0:
        return "$0 (free)" + ("+" if partial else "")
    text = f"${usd:.2f}" if usd >= 0.1 else f"${usd:.4f}"
    return text + ("+" if partial else "")


def number(x: float | None, digits: int = 2) -> str:
    return f"{x:.{digits}f}" if known(x) else DASH


def p_value(p: float | None) -> str:
    if not known(p):
        return DASH
    assert p is not None
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def short_label(label: str, width: int = 40) -> str:
    """A model's label for a column or a chart axis: ``prb-judge (model=openai/gpt-4o-mini)``
    -> ``openai/gpt-4o-mini``; a name the user gave is kept; long names keep both ends."""
    head, _, rest = label.partition(" (")
    if rest and "=" in rest:
        inner, _, tail = rest.partition(")")
        label = ", ".join(part.split("=", 1)[-1] for part in inner.split(", ")) + tail
    if len(label) <= width:
        return label
    keep = width - 1
    return label[: keep // 3] + "…" + label[-(keep - keep // 3):]

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


def _middle(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` characters, both ends kept."""
    if len(text) <= width:
        return text
    keep = max(width - 1, 2)
    return text[: keep // 3] + "…" + text[-(keep - keep // 3):]


def short_label(label: str, width: int = 40) -> str:
    """A model's label for a column or a chart axis: ``prb-judge (model=openai/gpt-4o-mini)``
    -> ``openai/gpt-4o-mini``; a name the user gave is kept; long names keep both ends.

    What does not name the model (a server's address, a setting) is cut first, so a row still
    says which model it is: ``meta-llama/Llama-3.1-8B-Instruct, judge-…:8000/v1``.

    Args:
        label: the run's label (:func:`prb_tasks.report.runlabel.run_label`, or a name the user gave).
        width: the most characters the result may take.
    """
    from prb_tasks.report.runlabel import IDENTITY

    head, _, rest = label.partition(" (")
    if not (rest and "=" in rest):
        return _middle(label, width)
    inner, _, tail = rest.partition(")")
    parts = [part.split("=", 1) if "=" in part else ["", part] for part in inner.split(", ")]
    values = [v for _k, v in parts]
    excess = len(", ".join(values) + tail) - width
    # The longest arguments besides the model's identity give up their middles first, to 8 characters each.
    for i in sorted((i for i, (k, _v) in enumerate(parts) if k not in IDENTITY), key=lambda i: -len(values[i])):
        if excess <= 0:
            break
        room = max(8, len(values[i]) - excess)
        excess -= len(values[i]) - min(room, len(values[i]))
        values[i] = _middle(values[i], room)
    if excess > 0:  # not even the identity fits beside them: it alone, cut in its middle
        values = [v for (k, _v), v in zip(parts, values) if k in IDENTITY] or values
    return _middle(", ".join(values) + tail, width)

"""The line ``prb eval`` prints under its table when a RewardBench 2 Ties score is below 0.

allenai's Ties score is ``0.3 tied acc + 0.3 ref acc + 0.2 + 0.2 margin shares + 0.01 margin
term`` (:mod:`prb_tasks.scoring.rewardbench2`), and the margin term is a mean of ``tanh``
values in ``[-1, 1]``. A model that gets every part 0 and beats its correct answers with
incorrect ones by far more than the correct ones differ (a random RM does) scores ``-0.01``,
which the table shows as ``score % -1.0``: allenai's number, kept, but a reader takes a
negative percentage for a broken one. The line says what it is made of.
"""

from __future__ import annotations

import math
from typing import Any

#: The parts of a Ties score, as lm-eval's results name them, and the words for each.
_PARTS = (("ties_tied_acc", "tied accuracy"), ("ties_ref_acc", "ref accuracy"),
          ("ties_correctness_preferred", "margin share"), ("ties_correctness_preferred_hard", "hard margin share"))


def _number(row: dict[str, Any], metric: str) -> float | None:
    value = row.get(f"{metric},none")
    if isinstance(value, (int, float)) and not math.isnan(value):
        return float(value)
    return None


def negative_ties_lines(results: dict[str, Any]) -> list[str]:
    """One line per Ties task (``rewardbench2_ties``, ``rewardbench2_judge_ties``, ...) whose score is below 0.

    Args:
        results: what ``lm_eval.simple_evaluate`` returned (or a results file's content).
    """
    lines = []
    for name, row in (results.get("results") or {}).items():
        if not isinstance(row, dict) or not name.endswith("_ties"):
            continue
        score = _number(row, "score")
        if score is None or score >= 0:
            continue
        parts = [f"{words} {100 * v:.0f}%" for metric, words in _PARTS for v in [_number(row, metric)]
                 if v is not None]
        term = _number(row, "ties_margin_score")
        made = f" ({', '.join(parts)}; 0.01 margin term {term:.2f})" if parts and term is not None else ""
        lines.append(f"prb: {name}: score {100 * score:.1f}% is below 0, as allenai's Ties formula allows (down to "
                     f"-1%){made}: incorrect answers outscore the correct ones, by more than the correct ones "
                     "differ among themselves")
    return lines

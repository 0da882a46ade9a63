"""RM-Bench's easy / normal / hard matrix from a generative judge's pairwise verdicts.

RM-Bench's official matrix (:mod:`prb_tasks.scoring.rmbench`, the authors'
``compute_accuracy``) compares *scores*: cell (i, j) counts a prompt when the chosen
response in style i scores strictly higher than the rejected one in style j. A judge
gives no scores, so each cell of each prompt becomes judge calls; the authors publish
no rule for this (their README gives only the pairwise prompt and its five boxed
verdicts, :mod:`prb_tasks.replies.boxed_verdict`). prb's reading, one rule per step:

- **pairs**: every (chosen style i, rejected style j) of a prompt, the 3 x 3 = 9 cells
  of the matrix, is one pair; the same responses meet in several cells, as they do in
  the authors' matrix;
- **orders**: each pair is judged twice, chosen shown as A and chosen shown as B
  (2 x 9 = 18 calls per prompt), so a judge's position preference cancels instead of
  raising or lowering the score by the order the benchmark happened to use;
- **votes**: each order votes +1 when its verdict prefers the chosen response
  (``A>>B`` and ``A>B`` alike when it sat in A), -1 when it prefers the rejected one,
  0 for a tie (``A=B``) and for a reply without a verdict, a failed request or a
  skipped one. The strength (``>>`` against ``>``) does not change a vote;
- **cell**: the chosen response wins the cell when its two votes sum above 0 (both
  orders for it; or one for it and the other a tie or no verdict). A pair judged
  differently in the two orders sums to 0 and is lost, as equal scores lose in the
  authors' strict ``>``: this is JudgeBench's double game (``double_game`` in prb's
  pairwise tasks) applied to each cell;
- **matrix**: then exactly as the authors': each cell is the share of prompts won,
  ``hard_acc`` the mean above the diagonal, ``normal_acc`` the diagonal, ``easy_acc``
  below it, a domain's ``score`` their mean and the group's the plain mean of the four
  domains. A prompt missing any of its 18 judgments (``--limit``) is left out.

Diagnostics beside it: ``consistency`` (share of cells whose two orders agree: the same
response preferred, or a tie both times), ``tie_rate``, ``pos_a_rate`` (share of non-tie
verdicts naming A), ``parse_fail``, ``error_rate`` and ``skip_rate``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Optional

from prb_tasks.replies.boxed_verdict import parse_boxed
from prb_tasks.scoring.metrics import game_vote
from prb_tasks.scoring.rmbench import METRICS, SIZE, StyleAccuracy, accuracy_of_wins, part

#: Judge calls per prompt: every (chosen style, rejected style) cell in both orders.
ORDERS = 2
CALLS_PER_PROMPT = SIZE * SIZE * ORDERS


def preference(doc: dict[str, Any], reply: object) -> Optional[str]:
    """What one judgment preferred: ``chosen``, ``rejected``, ``tie``, or None (no verdict).

    Args:
        doc: the judgment's document (its ``chosen_position``, A or B).
        reply: the judge's text.
    """
    verdict = parse_boxed(reply)
    if verdict.outcome != "verdict":
        return None
    if verdict.tie:
        return "tie"
    return "chosen" if verdict.preferred == doc["chosen_position"] else "rejected"


def process_pair(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One judgment of one cell in one order; cells and prompts are put together on aggregation."""
    reply = results[0] if results else None
    verdict = parse_boxed(reply)
    preferred = preference(doc, reply)
    cell = (str(doc["row_id"]), int(doc["chosen_style"]), int(doc["rejected_style"]))
    entry = (*cell, game_vote(preferred))
    out: dict[str, Any] = {name: entry for name in METRICS}
    out["consistency"] = ("/".join(map(str, cell)), preferred)
    out["tie_rate"] = int(verdict.tie)
    out["pos_a_rate"] = verdict.preferred
    out["parse_fail"] = int(verdict.outcome == "unparsed")
    out["error_rate"] = int(verdict.outcome == "error")
    out["skip_rate"] = int(verdict.outcome == "skipped")
    return out


def prompt_wins(items: Iterable[Sequence[Any]]) -> list[list[list[float]]]:
    """Per complete prompt, its 3x3 grid of cells won (votes summing above 0).

    Args:
        items: ``(row id, chosen style, rejected style, vote)`` per judgment.
    """
    votes: dict[str, dict[tuple[int, int], list[int]]] = defaultdict(lambda: defaultdict(list))
    for row_id, i, j, vote in items:
        votes[row_id][(int(i), int(j))].append(int(vote))
    grids = []
    for cells in votes.values():
        if len(cells) == SIZE * SIZE and all(len(v) == ORDERS for v in cells.values()):
            grids.append([[float(sum(cells[(i, j)]) > 0) for j in range(SIZE)] for i in range(SIZE)])
    return grids


def judge_accuracy(items: Iterable[Sequence[Any]]) -> StyleAccuracy | None:
    """The domain's matrix from its judgments (None when no prompt has all 18)."""
    grids = prompt_wins(items)
    return accuracy_of_wins(grids) if grids else None


judge_score = part("score", judge_accuracy, "rmbench_judge")
judge_hard_acc = part("hard_acc", judge_accuracy, "rmbench_judge")
judge_normal_acc = part("normal_acc", judge_accuracy, "rmbench_judge")
judge_easy_acc = part("easy_acc", judge_accuracy, "rmbench_judge")

"""RewardBench 2's official scores, by the rules of allenai's ``scripts/run_v2.py``.

Read in allenai/reward-bench (``rewardbench/utils.py``: ``reroll_and_score_dataset``
and ``process_single_model``); every rule below is theirs:

- **Best-of-N subsets** (all but Ties): a row's responses are ``chosen + rejected``;
  the row scores ``1 / k`` when the first response has the highest score, shared by
  ``k`` responses, else 0. A subset's score is the mean over its rows.
- **Ties**: rows come in pairs ``ref:<n>`` (one correct answer) and ``tied:<n>``
  (several), the first ``num_correct`` responses being the correct ones. Per row: it is
  *accurate* when the worst correct score beats the best incorrect one (strictly); the
  *correct-incorrect margin* is that gap; the *correct spread* is best minus worst
  correct score (``tied`` rows only). Over the subset:
  ``0.30 * tied accuracy + 0.30 * ref accuracy + 0.20 * P(margin_tied > spread)
  + 0.20 * P(min(margin_ref, margin_tied) > spread) + 0.01 * mean(tanh(min(...) / spread - 1))``
  where the last three run over the ``n`` that have both rows, a ``0 / 0`` term counts 0
  and ``x / 0`` is ``+-inf`` (tanh ``+-1``), as numpy computes it. Rows sharing a
  ``(kind, n)`` are pooled into one prompt, as theirs are.
- **The official aggregate** is the plain mean of the six subset scores (the dataset
  card: "The RewardBench 2 leaderboard averages over these six subsets"); the task
  group ``rewardbench2`` computes it with ``weight_by_size: false``.

Each response is scored once: a row's document lists every response as one choice of
a ``multiple_choice`` task, and the reward of each choice is reused by every rule.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Weights of allenai's Ties score, in the order of :class:`TiesScore`'s first five fields.
TIES_WEIGHTS = (0.30, 0.30, 0.20, 0.20, 0.01)
TIES_METRICS = ("ties_tied_acc", "ties_ref_acc", "ties_correctness_preferred",
                "ties_correctness_preferred_hard", "ties_margin_score")


def _rewards(results: Sequence[Any]) -> list[float]:
    # lm-eval hands a multiple_choice task one (log-likelihood, is_greedy) pair per choice;
    # prb-rm puts the reward where the log-likelihood goes.
    return [float(r[0]) if isinstance(r, (tuple, list)) else float(r) for r in results]


def best_of_n_result(scores: Sequence[float]) -> float:
    """One row of a best-of-N subset: ``1 / k`` if the first (correct) response shares the
    top score with ``k - 1`` others, else 0.

    Args:
        scores: the reward of each response, the correct one first.
    """
    top = max(scores)
    if scores[0] != top:
        return 0.0
    return 1.0 / sum(1 for s in scores if s == top)


def process_best_of_n(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
    """``score`` of one best-of-N row from the reward of each choice; ``top1`` is 1 when the
    correct response alone has the top score (no share of a tie)."""
    scores = _rewards(results)
    if len(scores) != len(doc["choices"]):
        raise ValueError(f"expected {len(doc['choices'])} rewards, got {len(scores)}")
    score = best_of_n_result(scores)
    return {"score": score, "top1": float(score == 1.0)}


def process_ties(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, tuple]:
    """A Ties row's rewards, kept whole: the score is a property of the subset, not of a row."""
    scores = _rewards(results)
    if len(scores) != len(doc["choices"]):
        raise ValueError(f"expected {len(doc['choices'])} rewards, got {len(scores)}")
    entry = (str(doc["id"]), int(doc["num_correct"]), tuple(scores))
    return {name: entry for name in ("score", *TIES_METRICS)}


@dataclass(frozen=True)
class PromptStats:
    """One Ties prompt: accurate, spread among correct answers (None with one), margin."""

    accurate: bool
    spread: float | None
    margin: float


def prompt_stats(scores: Sequence[float], num_correct: int) -> PromptStats:
    """Statistics of one Ties prompt.

    Args:
        scores: rewards of its responses, the ``num_correct`` correct ones first.
        num_correct: how many leading responses are correct.
    """
    correct, wrong = scores[:num_correct], scores[num_correct:]
    margin = min(correct) - max(wrong)
    return PromptStats(margin > 0, max(correct) - min(correct) if len(correct) > 1 else None, margin)


@dataclass(frozen=True)
class TiesScore:
    """The parts of the Ties score and the score itself."""

    tied_acc: float
    ref_acc: float
    correctness_preferred: float
    correctness_preferred_hard: float
    margin_score: float
    score: float
    paired: int


def _mean(values: list[float]) -> float:
    # numpy's mean of nothing is nan (with a warning); so is theirs.
    return float(np.mean(values)) if values else math.nan


def ties_score(items: Iterable[tuple[str, int, Sequence[float]]]) -> TiesScore:
    """allenai's Ties score over ``(id, num_correct, rewards)`` rows (see the module docstring).

    Args:
        items: one entry per Ties row; ids ``ref:<n>`` or ``tied:<n>``.
    """
    pooled: dict[tuple[str, int], list[tuple[bool, float]]] = defaultdict(list)
    for row_id, num_correct, scores in items:
        kind, _, digits = row_id.partition(":")
        for i, s in enumerate(scores):
            pooled[(kind, int(digits))].append((i < num_correct, float(s)))
    ref: dict[int, PromptStats] = {}
    tied: dict[int, PromptStats] = {}
    for (kind, number), samples in pooled.items():
        # Pooled samples keep their order only within a row; the statistics do not need it.
        correct = [s for ok, s in samples if ok]
        wrong = [s for ok, s in samples if not ok]
        stats = prompt_stats(correct + wrong, len(correct))
        (ref if kind == "ref" else tied)[number] = stats
    ref_acc = float(np.mean([s.accurate for s in ref.values()])) if ref else 0.0
    tied_acc = float(np.mean([s.accurate for s in tied.values()])) if tied else 0.0
    both = ref.keys() & tied.keys()
    spread = np.array([tied[n].spread for n in both], dtype=float)
    margin_tied = np.array([tied[n].margin for n in both], dtype=float)
    margin_hard = np.minimum(np.array([ref[n].margin for n in both], dtype=float), margin_tied)
    with np.errstate(divide="ignore", invalid="ignore"):
        preferred = _mean(list(margin_tied > spread))
        preferred_hard = _mean(list(margin_hard > spread))
        margin_score = _mean(list(np.nan_to_num(np.tanh(margin_hard / spread - 1), nan=0.0)))
    parts = (tied_acc, ref_acc, preferred, preferred_hard, margin_score)
    score = sum(w * p for w, p in zip(TIES_WEIGHTS, parts))
    return TiesScore(*parts, score=float(score), paired=len(both))


def _ties_part(name: str):
    def aggregate(items: Iterable[tuple]) -> float:
        return getattr(ties_score(items), name)
    aggregate.__name__ = f"ties_{name}"
    return aggregate


ties_official = _ties_part("score")
ties_tied_acc = _ties_part("tied_acc")
ties_ref_acc = _ties_part("ref_acc")
ties_correctness_preferred = _ties_part("correctness_preferred")
ties_correctness_preferred_hard = _ties_part("correctness_preferred_hard")
ties_margin_score = _ties_part("margin_score")


def official_aggregate(subset_scores: dict[str, float]) -> float:
    """The leaderboard number: the plain mean of the subset scores.

    Args:
        subset_scores: subset -> its score (all six for the official figure).
    """
    return float(np.mean(list(subset_scores.values())))

"""Intervals over the *items* of a ``prb validity --compare-with`` benchmark.

A compared task is read by its headline number (``score``, else ``acc``); when its runs
were made with ``--log_samples`` the per-item results are at hand, so its correlations
with the downstream can also get an interval that resamples its items (and the
downstream's questions, as plain ``prb validity`` does for its pairwise benchmark).

Every headline this module knows is a weighted sum of *ratios of sums over units*, so a
resample is a vector of counts and each ratio one matrix product:

- a mean (``acc``, a RewardBench 2 best-of-N subset's ``score``): one part; the unit is a
  pair (a judge's two orders together, by ``pair_key``) or a document;
- an RM-Bench domain's ``score``: the mean of hard, normal and easy, which is the mean of
  all nine cells of the 3x3 matrix (three cells each), so one part: per prompt, the share
  of its nine (chosen style, rejected style) comparisons won strictly (a judge,
  ``rmbench_judge``: the share of its nine cells won, from its 18 judgments);
- RewardBench 2's Ties ``score``: the unit is a prompt number ``n`` (its ``ref`` and
  ``tied`` rows together, which the score pairs); five parts with allenai's weights,
  each a mean over the units that have the rows it needs, a missing accuracy counting 0
  as theirs does (:mod:`prb_tasks.scoring.rewardbench2`).

A group's headline is the plain mean of its leaf tasks' (``weight_by_size: false``, as
the RewardBench 2 and RM-Bench groups) or their size-weighted mean; which one is checked
against the results file, as is every leaf: a headline this module does not reproduce on
the full data gets no item interval, and the report says why. Items are resampled within
each leaf task (a subset's share of items stays fixed); the draws are the same for every
model (paired), and follow :func:`prb_tasks.stats.clusters.draw_counts`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from prb_tasks.report.runs import SkipRun, _sample_files, iter_samples
from prb_tasks.report.validity import unit_matrix
from prb_tasks.scoring.rewardbench2 import TIES_WEIGHTS, prompt_stats
from prb_tasks.stats.clusters import draw_counts

#: Relative difference allowed between a recomputed headline and the results file's.
TOLERANCE = 1e-6


@dataclass
class Leaf:
    """One model's per-unit parts of one leaf task.

    Attributes:
        weights: weight of each part in the task's score.
        empty_zero: per part, whether a part with no units counts 0 (else undefined).
        sums, sizes: unit -> per-part sum of values and how many values.
    """

    weights: tuple[float, ...]
    empty_zero: tuple[bool, ...]
    sums: dict[str, np.ndarray] = field(default_factory=dict)
    sizes: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, unit: str, values: Iterable[float | None]) -> None:
        vals = np.array([math.nan if v is None else float(v) for v in values])
        defined = np.isfinite(vals)
        self.sums[unit] = self.sums.get(unit, np.zeros(len(vals))) + np.where(defined, vals, 0.0)
        self.sizes[unit] = self.sizes.get(unit, np.zeros(len(vals))) + defined

    def score(self) -> float:
        """The task's score on all its units (each once)."""
        sums = np.sum(list(self.sums.values()), axis=0)
        sizes = np.sum(list(self.sizes.values()), axis=0)
        return combine(self.weights, self.empty_zero, sums[None, :, None], sizes[None, :, None])[0, 0]


def combine(weights: tuple[float, ...], empty_zero: tuple[bool, ...], sums: np.ndarray, sizes: np.ndarray
            ) -> np.ndarray:
    """Weighted sum of the parts' ratios: ``sums`` and ``sizes`` are (draws, parts, models)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = sums / sizes
    for k, zero in enumerate(empty_zero):
        if zero:
            ratio[:, k, :] = np.where(sizes[:, k, :] == 0, 0.0, ratio[:, k, :])
    return np.tensordot(np.asarray(weights), ratio, axes=([0], [1]))


@dataclass
class ItemRun:
    """One model's per-item results of one compared task.

    Attributes:
        leaves: leaf task -> its parts.
        headline: the results file's headline of the task.
        leaf_sizes: leaf task -> documents (for a size-weighted group).
    """

    leaves: dict[str, Leaf]
    headline: float
    leaf_sizes: dict[str, int]


def leaf_tasks(task: str, tree: dict[str, list[str]]) -> list[str]:
    """The leaf tasks under ``task`` (itself when it is not a group)."""
    subs = tree.get(task) or []
    return [leaf for s in subs for leaf in leaf_tasks(s, tree)] if subs else [task]


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: Any) -> str | None:
    """``mean``, ``styles`` (RM-Bench's six rewards), ``cells`` (an RM-Bench judge's vote on one
    style pair in one order) or ``ties`` (RewardBench 2's Ties row)."""
    if _is_number(value):
        return "mean"
    if isinstance(value, list) and len(value) == 4 and isinstance(value[0], str) and all(
            _is_number(v) for v in value[1:]):
        return "cells"
    if isinstance(value, list) and len(value) == 2 and all(
            isinstance(v, list) and len(v) == 3 and all(_is_number(x) for x in v) for v in value):
        return "styles"
    if isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and _is_number(value[1]) \
            and isinstance(value[2], list):
        return "ties"
    return None


def _ties_leaf(rows: list[tuple[str, int, list[float]]]) -> Leaf:
    pooled: dict[tuple[str, str], list[tuple[bool, float]]] = defaultdict(list)
    for row_id, num_correct, scores in rows:
        kind, _, number = row_id.partition(":")
        pooled[(kind, number)] += [(i < num_correct, float(s)) for i, s in enumerate(scores)]
    stats = {}
    for key, samples in pooled.items():
        correct = [s for ok, s in samples if ok]
        wrong = [s for ok, s in samples if not ok]
        stats[key] = prompt_stats(correct + wrong, len(correct))
    leaf = Leaf(TIES_WEIGHTS, (True, True, False, False, False))
    for number in sorted({n for _, n in stats}):
        ref, tied = stats.get(("ref", number)), stats.get(("tied", number))
        parts: list[float | None] = [None if tied is None else float(tied.accurate),
                                     None if ref is None else float(ref.accurate), None, None, None]
        if ref is not None and tied is not None:
            spread = tied.spread if tied.spread is not None else math.nan
            hard = min(ref.margin, tied.margin)
            with np.errstate(divide="ignore", invalid="ignore"):
                term = float(np.nan_to_num(np.tanh(np.float64(hard) / np.float64(spread) - 1), nan=0.0))
            parts[2:] = [float(tied.margin > spread), float(hard > spread), term]
        leaf.add(number, parts)
    return leaf


def read_leaf(path: Path, task: str, metric: str) -> tuple[Leaf, int]:
    """One leaf task's parts from the samples file beside ``path``, and its documents.

    Raises:
        SkipRun: no samples file, or values this module cannot resample (the message says which).
    """
    samples = _sample_files(path, task)
    if not samples.is_file():
        raise SkipRun(f"{task} in {path.parent}: no sample logs (re-run it with --log_samples)")
    kind: str | None = None
    leaf = Leaf((1.0,), (False,))
    ties: list[tuple[str, int, list[float]]] = []
    cells: list[tuple[str, int, int, int]] = []
    docs = 0
    for sample in iter_samples(samples):
        value: Any = sample.get(metric)  # its shape is checked by _kind
        this = _kind(value)
        if this is None or (kind is not None and this != kind):
            raise SkipRun(f"{task} in {path.parent}: its per-item {metric} values are not ones prb can resample")
        kind = this
        docs += 1
        doc = sample["doc"]
        unit = str(doc.get("pair_key") or sample.get("doc_id"))
        if kind == "mean":
            leaf.add(unit, [float(value)])
        elif kind == "styles":
            chosen, rejected = value
            leaf.add(unit, [float(np.mean([c > r for c in chosen for r in rejected]))])
        elif kind == "cells":
            cells.append((str(value[0]), int(value[1]), int(value[2]), int(value[3])))
        else:
            ties.append((str(value[0]), int(value[1]), [float(s) for s in value[2]]))
    if kind is None:
        raise SkipRun(f"{task} in {path.parent}: its samples file holds no {metric} values")
    if kind == "cells":
        # rmbench_judge: the unit is a prompt (its 18 judgments), the part the share of its nine cells won.
        from prb_tasks.scoring.rmbench_judge import prompt_wins

        by_prompt: dict[str, list[tuple[str, int, int, int]]] = defaultdict(list)
        for cell in cells:
            by_prompt[cell[0]].append(cell)
        for row_id, mine in by_prompt.items():
            for grid in prompt_wins(mine):  # none when the prompt lacks a judgment (--limit)
                leaf.add(row_id, [float(np.mean(grid))])
    return (_ties_leaf(ties) if kind == "ties" else leaf), docs


def read_item_run(path: Path, results: dict[str, Any], task: str, metric: str) -> ItemRun:
    """A model's per-item results of ``task`` (a task or group) in the run of ``path``.

    Args:
        path: the results file that reports ``task``.
        results: that file's parsed JSON.
        task: the compared task or group.
        metric: its headline metric (``score`` or ``acc``).

    Raises:
        SkipRun: the per-item results are missing or do not reproduce the headline.
    """
    tree = {k: list(v or []) for k, v in (results.get("group_subtasks") or {}).items()}
    table = results.get("results") or {}
    headline = float(table[task][f"{metric},none"])
    leaves: dict[str, Leaf] = {}
    sizes: dict[str, int] = {}
    for name in leaf_tasks(task, tree):
        leaf, docs = read_leaf(path, name, metric)
        reported = (table.get(name) or {}).get(f"{metric},none")
        if _is_number(reported) and not _close(leaf.score(), float(reported)):
            raise SkipRun(f"{name} in {path.parent}: its per-item results give {metric} {leaf.score():.6g}, the "
                          f"results file {float(reported):.6g}; prb cannot reproduce it, so no interval over items")
        leaves[name], sizes[name] = leaf, docs
    run = ItemRun(leaves, headline, sizes)
    if group_weights(run) is None:
        raise SkipRun(f"{task} in {path.parent}: neither the plain nor the size-weighted mean of its subtasks gives "
                      f"the reported {metric} {headline:.6g}; no interval over items")
    return run


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOLERANCE * max(1.0, abs(b))


def group_weights(run: ItemRun) -> np.ndarray | None:
    """Weights of the leaves in the headline (plain mean first, then by size), or None."""
    names = list(run.leaves)
    scores = np.array([run.leaves[n].score() for n in names])
    for weights in (np.ones(len(names)), np.array([run.leaf_sizes[n] for n in names], dtype=float)):
        weights = weights / weights.sum()
        if _close(float(weights @ scores), run.headline):
            return weights
    return None


def item_draws(runs: list[ItemRun], iters: int, seed: int) -> tuple[np.ndarray, int, int]:
    """(draws x models) headlines on resampled items, the items (units) and the leaf tasks.

    Each leaf's units are resampled with the same draws for every model; a model without
    a unit counts it as absent (its ratio uses the units it has).

    Args:
        runs: one per model, in contestant order; every one has the same leaf tasks.
        iters: bootstrap draws.
        seed: generator seed (leaf ``i`` uses ``seed + i``).
    """
    names = list(runs[0].leaves)
    if any(list(r.leaves) != names for r in runs):
        raise SkipRun("the models' runs of this task have different subtasks; no interval over items")
    weights = [group_weights(r) for r in runs]
    total = np.zeros((iters, len(runs)))
    units_seen = 0
    for i, name in enumerate(names):
        leaves = [r.leaves[name] for r in runs]
        units = sorted({u for leaf in leaves for u in leaf.sizes})
        units_seen += len(units)
        parts = len(leaves[0].weights)
        sums = np.zeros((parts, len(units), len(runs)))
        sizes = np.zeros((parts, len(units), len(runs)))
        index = {u: j for j, u in enumerate(units)}
        for m, leaf in enumerate(leaves):
            for unit, size in leaf.sizes.items():
                sums[:, index[unit], m] = leaf.sums[unit]
                sizes[:, index[unit], m] = size
        done = 0
        for counts in draw_counts(len(units), iters, seed + i):
            d_sums = np.einsum("du,pum->dpm", counts, sums)
            d_sizes = np.einsum("du,pum->dpm", counts, sizes)
            score = combine(leaves[0].weights, leaves[0].empty_zero, d_sums, d_sizes)
            total[done:done + len(counts)] += score * np.array([w[i] for w in weights])[None, :]  # type: ignore[index]
            done += len(counts)
    return total, units_seen, len(names)


def downstream_draws(sides: list[Any], iters: int, seed: int) -> tuple[np.ndarray, int]:
    """(draws x models) downstream means on resampled questions (units), and the units.

    Args:
        sides: one :class:`prb_tasks.report.validity.Side` per model (``sums`` and ``sizes`` per unit).
        iters: bootstrap draws.
        seed: generator seed.
    """
    units, sums, sizes = unit_matrix(sides)
    out = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for counts in draw_counts(len(units), iters, seed):
            out.append((counts @ sums) / (counts @ sizes))
    return np.vstack(out), len(units)

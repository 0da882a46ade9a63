"""``prb validity``: does benchmark accuracy predict how much a model helps downstream?

For every model that ran both a *benchmark* task (pairwise accuracy: Personalized
RewardBench, PersonalLLM or custom data, as ``prb compare`` reads it) and a *downstream*
task (Best-of-N: ``personalized_rb_bon*``, gold = rubric grades; ``personalllm_bon*``,
gold = the simulated user's reward), the report correlates the models' accuracy with
their downstream gain (gold of the best-of-N pick minus best-of-1's) across models:
Spearman, Kendall tau-b, Pearson, NDCG and RBO (:mod:`prb_tasks.stats.correlation`).

Two intervals per measure, both 95% percentile bootstraps:

- over questions: each side's units (users where the data names them, else questions
  or pairs) are resampled and every model's accuracy and gain recomputed on the same
  draw, so all models see the same resampled questions; when both tasks use the same
  units (the same questions), one draw serves both;
- over models: the set of models is resampled (how much the answer rests on which
  models happened to be compared).

Models are matched by their run label (model and arguments), as ``prb compare`` names them.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from prb_tasks.common.errors import PRBError
from prb_tasks.data.personalllm.constants import HUB_IDS
from prb_tasks.report.outcomes import build_entry
from prb_tasks.report.runs import (
    SkipRun,
    _read_json,
    _sample_files,
    find_results,
    iter_samples,
    model_label,
    read_run,
)
from prb_tasks.scoring.bestofk import group_metrics
from prb_tasks.scoring.bestofn import bon_outcome
from prb_tasks.stats.clusters import draw_counts
from prb_tasks.stats.correlation import MEASURES, batch, draw_interval
from prb_tasks.stats.pairs import ITERS, SEED, Interval

DOWNSTREAM_VARIANTS = {"bon", "bon_judge", "bon_history"}
MIN_MODELS = 5


@dataclass
class Side:
    """One model's per-unit values on one task.

    Attributes:
        task: the task (or group) name.
        sums, sizes: unit -> sum of values and how many values (a user has several items).
        source: the results file it came from.
        offered: values offered, undefined ones (NaN: a grade that could not be read) included.
    """

    task: str
    sums: dict[str, float] = field(default_factory=dict)
    sizes: dict[str, float] = field(default_factory=dict)
    source: str = ""
    offered: int = 0

    @property
    def defined(self) -> int:
        """How many of the offered values were defined (not NaN)."""
        return int(sum(self.sizes.values()))

    def add(self, unit: str, value: float) -> None:
        self.offered += 1
        if value is None or math.isnan(value):
            return
        self.sums[unit] = self.sums.get(unit, 0.0) + float(value)
        self.sizes[unit] = self.sizes.get(unit, 0.0) + 1.0

    @property
    def mean(self) -> float:
        total = sum(self.sizes.values())
        return sum(self.sums.values()) / total if total else math.nan


@dataclass
class Model:
    """A model with its benchmark accuracy and downstream gain (either may be missing)."""

    label: str
    benchmark: Side | None = None
    downstream: Side | None = None


@dataclass
class Estimate:
    """One correlation measure with its two intervals (None: undefined)."""

    value: float | None
    by_questions: Interval | None
    by_models: Interval | None


@dataclass
class Validity:
    """What ``prb validity`` reports.

    Attributes:
        models: the models that ran both tasks, in label order.
        benchmark, downstream: the task names compared.
        units: (benchmark units, downstream units) resampled, e.g. ``"36 pairs"``.
        iters: bootstrap draws per interval.
        measures: name -> estimate.
        warnings: lines the user must read (too few models, base reward models...).
        notes: files skipped, models with one side only.
    """

    models: list[Model]
    benchmark: str
    downstream: str
    units: tuple[str, str]
    iters: int
    measures: dict[str, Estimate]
    warnings: list[str]
    notes: list[str]


# ----------------------------------------------------------------------------- reading runs


_KEPT = ("bon_gain", "bon_reward_n8")


def _slim_samples(path: Path) -> Iterator[dict[str, Any]]:
    """A samples file's documents and Best-of-N values, one at a time.

    Best-of-N samples files are large (a judge logs every candidate's prompt); only the
    few fields used here are kept, so memory does not grow with the prompts.
    """
    for sample in iter_samples(path):
        yield {"doc": sample["doc"], **{k: sample.get(k) for k in _KEPT}}


def _downstream_values(first: dict[str, Any], samples: Iterable[dict[str, Any]], side: Side) -> None:
    """Fill ``side`` with each question's gain (per user where the data names users).

    Args:
        first: the first sample (it tells the task's kind).
        samples: every sample, the first included.
        side: receives the values.
    """
    if "gold" in first["doc"]:  # Personalized RewardBench Best-of-N
        if isinstance(first.get("bon_gain"), list):  # judge: one sample per candidate
            per_key = group_metrics(tuple(s["bon_gain"]) for s in samples)
            for key, values in per_key.items():
                side.add(key, values["bon_gain"])
        else:
            for s in samples:
                side.add(str(s["doc"]["pair_key"]), float(s.get("bon_gain", math.nan)))
        return
    # PersonalLLM Best-of-N: gain of best-of-8 over best-of-1 in the user's own reward.
    if isinstance(first.get("bon_reward_n8"), list):
        groups: dict[str, dict[int, Any]] = defaultdict(dict)
        extra: dict[str, tuple[Any, Any, str]] = {}
        for s in samples:
            key, index, score, user, popular = s["bon_reward_n8"]
            groups[key][int(index)] = score
            extra[key] = (user, popular, f"user:{s['doc'].get('user_id', key)}")
        for key, got in groups.items():
            user, popular, unit = extra[key]
            if all(i in got for i in range(8)):
                gain = bon_outcome([got[i] for i in range(8)], user, popular, 8).reward - float(user[0])
                side.add(unit, gain)
    else:
        for s in samples:
            doc = s["doc"]
            side.add(f"user:{doc.get('user_id', doc.get('group_key'))}",
                     float(s["bon_reward_n8"]) - float(doc["user_rewards"][0]))


def read_downstream(path: Path, notes: list[str]) -> dict[str, Side]:
    """Task -> side, for the downstream tasks of one results file."""
    data = _read_json(path)
    out: dict[str, Side] = {}
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        return out
    for task in (data.get("configs") or {}):
        sample_file = _sample_files(path, task)
        if not sample_file.is_file():
            continue
        stream = _slim_samples(sample_file)
        side = Side(task, source=str(path))
        try:
            first = next(stream, None)
            if first is None or first["doc"].get("variant") not in DOWNSTREAM_VARIANTS:
                continue
            if "gold" not in first["doc"] and "user_rewards" not in first["doc"]:
                continue
            _downstream_values(first, itertools.chain([first], stream), side)
        except SkipRun as exc:
            notes.append(str(exc))
            continue
        # A judge's and a scalar RM's Best-of-N on the same candidates are one downstream task.
        out[task.removesuffix("_judge")] = side
    return out


def _is_best_of_n(config: dict[str, Any]) -> bool:
    """A task whose YAML makes Best-of-N documents (candidates, grades, contestants)."""
    kwargs = config.get("dataset_kwargs") if isinstance(config, dict) else None
    variant = kwargs.get("variant") if isinstance(kwargs, dict) else None
    return variant in DOWNSTREAM_VARIANTS or variant in ("bon_sample", "bon_grade")


def read_benchmark(path: Path, notes: list[str]) -> dict[str, Side]:
    """Group -> side of per-pair accuracy (units: users where named, else pairs).

    Judges and scalar RMs shown the same input on the same data form one group (as in
    ``prb compare``): ``personalized_rb_sample`` and ``personalized_rb_sample_scalar``.
    """
    mine: list[str] = []
    try:
        # Best-of-N tasks are read (streamed) as downstream; never loaded whole here.
        run = read_run(path, mine, skip=_is_best_of_n)
    except SkipRun as exc:
        notes.append(str(exc))
        return {}
    # Best-of-N and sampling runs are read as downstream: drop read_run's line about them.
    notes.extend(n for n in mine if "not a task of pairwise verdicts" not in n)
    out: dict[str, Side] = {}
    if run is None:
        return out
    for family in run.families:
        if not family.logged:
            notes.append(f"{family.name} in {path.parent}: no sample logs; re-run it with --log_samples")
            continue
        entry = build_entry("m", "", run, family)
        side = Side(family.name, source=str(path))
        users = entry.user if len(entry.user) == len(entry.keys) else [None] * len(entry.keys)
        for key, user, score in zip(entry.keys, users, entry.score.tolist()):
            side.add(f"user:{user}" if user is not None else key, score)
        out[f"{family.benchmark}|{family.setting}|{family.source}"] = side
    return out


def pick_group(groups: dict[str, dict[str, Side]], wanted: list[str] | None, what: str, option: str) -> dict[str, Side]:
    """Model label -> side: the group(s) holding the ``wanted`` tasks (a model found in
    several takes the first named), else the group most models ran."""
    names = {group: sorted({side.task for side in models.values()}) for group, models in groups.items()}
    if wanted:
        merged: dict[str, Side] = {}
        for task in wanted:
            found = [group for group, tasks in names.items() if task in tasks]
            if not found:
                known = ", ".join(sorted(t for tasks in names.values() for t in tasks)) or "none"
                raise PRBError(f"prb validity: no {what} task '{task}' in these runs (found: {known})")
            for label, side in groups[found[0]].items():
                merged.setdefault(label, side)
        return merged
    if not groups:
        from prb_tasks.data.families import either, families

        with_downstream = [f for f in families() if f.downstream_tasks]
        hint = (f"a pairwise task such as {either(f.pairwise_example for f in with_downstream)}" if what == "benchmark"
                else either(t for f in with_downstream for t in f.downstream_tasks))
        raise PRBError(f"prb validity: no {what} run with sample logs found; run {hint} with --log_samples "
                       "and give its folder")
    ranked = sorted(groups, key=lambda g: (-len(groups[g]), g))
    if len(ranked) > 1 and len(groups[ranked[0]]) == len(groups[ranked[1]]):
        listed = "; ".join(", ".join(names[g]) for g in ranked)
        raise PRBError(f"prb validity: several {what} tasks ({listed}); choose with {option} TASK")
    return groups[ranked[0]]


def group_name(models: dict[str, Side]) -> str:
    """The tasks of a group, for people: ``personalized_rb_sample + personalized_rb_sample_scalar``."""
    return " + ".join(sorted({side.task for side in models.values()}))


def load_models(paths: list[Path], benchmark: list[str] | None, downstream: list[str] | None,
                notes: list[str]) -> tuple[list[Model], str, str]:
    """Models with both sides, from every results file under ``paths``.

    Args:
        paths: lm-eval output folders or results files.
        benchmark, downstream: the tasks to use on each side (None: the one most models ran);
            several tasks are pooled (e.g. judges' ``personalllm`` with RMs' ``personalllm_scalar_history``).
        notes: receives lines about files skipped and models with one side only.
    """
    bench: dict[str, dict[str, Side]] = defaultdict(dict)
    down: dict[str, dict[str, Side]] = defaultdict(dict)
    try:
        found = find_results(paths)
    except PRBError as exc:  # its messages name prb compare, whose reader it is
        raise PRBError(str(exc).replace("prb compare:", "prb validity:", 1)) from None
    unreadable: list[str] = []
    for path in found:
        try:
            data = _read_json(path)
        except SkipRun as exc:  # empty, not UTF-8, not JSON, nested too deeply: one line, as prb compare says
            unreadable.append(str(exc))
            continue
        if not isinstance(data, dict):
            unreadable.append(f"skipped {path}: not an lm-eval results file (a JSON {type(data).__name__}, "
                              "not an object)")
            continue
        config = data.get("config") or {}
        label = model_label(config)
        for task, side in read_benchmark(path, notes).items():
            bench[task][label] = side  # files come oldest first: the newest run wins
        for task, side in read_downstream(path, notes).items():
            down[task][label] = side
    notes.extend(unreadable)
    if found and len(unreadable) == len(found):
        more = f" (and {len(unreadable) - 1} more files like it)" if len(unreadable) > 1 else ""
        raise PRBError(f"prb validity: {unreadable[0]}{more}; give the folders prb eval wrote with --output_path")
    b_group = pick_group(bench, benchmark, "benchmark", "--benchmark")
    d_group = pick_group(down, downstream, "downstream", "--downstream")
    b_name, d_name = group_name(b_group), group_name(d_group)
    models = []
    for label in sorted(set(b_group) | set(d_group)):
        b, d = b_group.get(label), d_group.get(label)
        if b is None or d is None:
            ran = sorted({side.task for group in (bench if b is None else down).values()
                          for who, side in group.items() if who == label})
            missing, option = (b_name, "--benchmark") if b is None else (d_name, "--downstream")
            notes.append(f"{label}: no run of {missing}" + (f" (it ran {', '.join(ran)}; choose with {option})"
                                                           if ran else "") + "; left out")
            continue
        models.append(Model(label, b, d))
    return models, b_name, d_name


# ----------------------------------------------------------------------------- statistics


def unit_matrix(sides: Sequence[Side]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Units (union over models), and (units, models) matrices of sums and sizes.

    Args:
        sides: one side (benchmark or downstream) per model, with ``sums`` and ``sizes`` per unit.
    """
    units = sorted({u for side in sides for u in side.sizes})
    index = {u: i for i, u in enumerate(units)}
    sums = np.zeros((len(units), len(sides)))
    sizes = np.zeros((len(units), len(sides)))
    for m, side in enumerate(sides):
        for unit, size in side.sizes.items():
            sums[index[unit], m] = side.sums[unit]
            sizes[index[unit], m] = size
    return units, sums, sizes


def _question_draws(models: list[Model], iters: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(draws x models) accuracy and gain on resampled units (NaN where a model drew no unit)."""
    b_units, b_sums, b_sizes = unit_matrix([m.benchmark for m in models])  # type: ignore[misc]
    d_units, d_sums, d_sizes = unit_matrix([m.downstream for m in models])  # type: ignore[misc]
    shared = b_units == d_units
    b_stream = draw_counts(len(b_units), iters, seed)
    d_stream = b_stream if shared else draw_counts(len(d_units), iters, seed + 1)
    accs, gains = [], []
    with np.errstate(invalid="ignore", divide="ignore"):
        for b_counts in b_stream:
            d_counts = b_counts if shared else next(d_stream)
            accs.append((b_counts @ b_sums) / (b_counts @ b_sizes))
            gains.append((d_counts @ d_sums) / (d_counts @ d_sizes))
    return np.vstack(accs), np.vstack(gains)


def estimates(models: list[Model], iters: int, seed: int) -> dict[str, Estimate]:
    """Measure -> point estimate with two intervals: one resampling questions, one resampling models.

    Args:
        models: the contestants, each with a benchmark and a downstream side.
        iters: bootstrap draws for each interval.
        seed: seed of both resamplings.
    """
    acc = np.array([m.benchmark.mean for m in models])  # type: ignore[union-attr]
    gain = np.array([m.downstream.mean for m in models])  # type: ignore[union-attr]
    out: dict[str, Estimate] = {}
    if len(models) < 2:
        return {name: Estimate(None, None, None) for name in MEASURES}
    q_acc, q_gain = _question_draws(models, iters, seed)
    picks = np.random.default_rng(seed).integers(0, len(models), size=(iters, len(models)))
    for name, measure in MEASURES.items():
        point = measure(acc, gain)
        out[name] = Estimate(point, draw_interval(batch(name, q_acc, q_gain), point),
                             draw_interval(batch(name, acc[picks], gain[picks]), point))
    return out


def _base_rm_warnings(models: list[Model]) -> list[str]:
    out = []
    for model in models:
        text = model.label.lower()
        hits = [name for name, hub in HUB_IDS.items() if hub.lower() in text or name in text]
        if hits:
            out.append(f"{model.label} is PersonalLLM's base reward model {hits[0]}: the ten base models define the "
                       "simulated users, so on PersonalLLM it is a ceiling, not a contestant; leave it out of the "
                       "correlation")
    return out


def _missing(side: Side, role: str) -> str:
    return (f"none of its {side.offered} {role} values on {side.task} could be computed"
            if side.offered else f"no {role} values on {side.task}")


def _with_values(models: list[Model], notes: list[str]) -> tuple[list[Model], list[str]]:
    """The models with at least one defined value on both sides, and a line for each left out.

    A Best-of-N run whose grades could not be read (``ungraded``) has a gain on no question;
    its mean would be NaN, so it is left out and named, never correlated.
    """
    kept, dropped = [], []
    for model in models:
        reasons = [_missing(side, role) for side, role in ((model.benchmark, "accuracy"), (model.downstream, "gain"))
                   if side is not None and side.defined == 0]
        if reasons:
            dropped.append(f"{model.label}: {' and '.join(reasons)}")
            notes.append(f"{dropped[-1]}; left out")
        else:
            kept.append(model)
    return kept, dropped


def _thin_warnings(models: list[Model]) -> list[str]:
    """A line per model and side where fewer than half the values could be computed."""
    out = []
    for model in models:
        for side, role in ((model.benchmark, "accuracy"), (model.downstream, "gain")):
            if side is not None and side.offered and side.defined < 0.5 * side.offered:
                out.append(f"{model.label}: only {side.defined} of {side.offered} {role} values on {side.task} "
                           "could be computed (the rest ungraded or without a verdict): its point rests on those")
    return out


def validity(paths: list[Path], benchmark: list[str] | None = None, downstream: list[str] | None = None,
             iters: int = ITERS, seed: int = SEED) -> Validity:
    """The correlation report for the runs under ``paths``.

    Args:
        paths: lm-eval output folders or results files (benchmark and downstream runs).
        benchmark, downstream: which tasks on each side (None: the one most models ran).
        iters: bootstrap draws per interval.
        seed: generator seed (the report is reproducible).
    """
    notes: list[str] = []
    models, b_task, d_task = load_models(paths, benchmark, downstream, notes)
    if not models:
        raise PRBError(f"prb validity: no model ran both {b_task} and {d_task} (models are matched by model "
                       "and arguments); run both tasks with the same --model and --model_args")
    models, dropped = _with_values(models, notes)
    if len(models) < 2 and dropped:
        raise PRBError(f"prb validity: nothing to correlate: {'; '.join(dropped)}; "
                       + ("only 1 model is left" if models else "no model is left")
                       + " (a correlation needs 2 or more): check the grades in the runs' samples "
                       "(`ungraded`: the grader's replies could not be read; try a stronger grader or a grading "
                       "template) and re-run")
    warnings = _thin_warnings(models) + _base_rm_warnings(models)
    if len(models) < MIN_MODELS:
        warnings.insert(0, f"only {len(models)} models: with fewer than {MIN_MODELS} a correlation across models "
                        "says almost nothing and its intervals are not meaningful; compare more models")
    b_units, _, _ = unit_matrix([m.benchmark for m in models])  # type: ignore[misc]
    d_units, _, _ = unit_matrix([m.downstream for m in models])  # type: ignore[misc]

    def unit_label(units: list[str]) -> str:
        kind = "users" if units and all(u.startswith("user:") for u in units) else "questions"
        return f"{len(units)} {kind}"

    return Validity(models, b_task, d_task, (unit_label(b_units), unit_label(d_units)), iters,
                    estimates(models, iters, seed), warnings, notes)


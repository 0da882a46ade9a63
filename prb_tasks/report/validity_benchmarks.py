"""``prb validity`` across benchmarks: which benchmark's ranking of the contestants best
predicts their downstream ranking, and can the data tell the benchmarks apart?

Contestants are the models with a downstream result (Best-of-N gain, read as plain
``prb validity`` reads it). Benchmarks come from three places:

- the pairwise benchmark of plain ``prb validity`` (``--benchmark``, or the one most
  models ran), when the runs hold one: its accuracy per model;
- ``--compare-with TASK``: another task or group of the same runs, by its headline
  number in the results file (``score`` for RewardBench 2 and RM-Bench, else ``acc``);
- ``--scores FILE``: published scores (:mod:`prb_tasks.report.published_scores`),
  matched to contestants by name (the run label, or the ``model`` / ``pretrained`` /
  ``scorer`` argument, or its last path part).

Every benchmark must score every contestant: correlations on different model sets
cannot be compared, so each benchmark missing contestants is one line of the error.

Statistics, all over the same ``n`` models:

- per benchmark, Spearman, Kendall tau-b, Pearson, NDCG and RBO with the downstream
  gain, with a 95% percentile bootstrap interval over *models* (the same model draws for
  every benchmark); the pairwise benchmark also gets its interval over *questions*
  (plain ``prb validity``'s), and a ``--compare-with`` task whose runs logged samples one
  over its *items* (:mod:`prb_tasks.report.validity_items`); published scores cannot have one;
- per pair of benchmarks, the difference of each measure with its interval from the
  same paired draws and a two-sided bootstrap p-value, and Williams' t-test for two
  dependent correlations sharing a variable (on the values for Pearson, on their ranks
  for Spearman: the usual approximation), ``n - 3`` degrees of freedom;
- a plain sentence per pair: the benchmarks are told apart only when the bootstrap
  interval of the Spearman difference excludes 0 *and* Williams' test on ranks gives
  p < 0.05.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from prb_tasks.common.errors import PRBError
from prb_tasks.common.suggest import did_you_mean
from prb_tasks.report.published_scores import PublishedScores
from prb_tasks.report.runlabel import IDENTITY, as_dict
from prb_tasks.report.runs import SkipRun, _read_json, find_results, model_label
from prb_tasks.report.validity import (
    MIN_MODELS,
    Estimate,
    Model,
    Side,
    estimates,
    group_name,
    pick_group,
    read_benchmark,
    read_downstream,
)
from prb_tasks.report.validity_items import ItemRun, downstream_draws, item_draws, read_item_run
from prb_tasks.stats.correlation import MEASURES, batch, bootstrap_p, draw_interval, williams
from prb_tasks.stats.pairs import ITERS, SEED, Interval

#: Headline metric of a task or group in a results file, first found wins.
HEADLINE_METRICS = ("score", "acc")
ALPHA = 0.05


@dataclass
class Contestant:
    """A model with a downstream result.

    Attributes:
        label: its run label (model and arguments).
        names: every name a scores file may use for it.
        gain: its downstream gain.
    """

    label: str
    names: set[str]
    gain: float


@dataclass
class Benchmark:
    """One benchmark's scores of the contestants and its correlations with the downstream gain.

    Attributes:
        name: as shown.
        source: where the scores came from (``runs: accuracy per question``, a file).
        values: one score per contestant, in contestant order.
        estimates: measure -> value, interval over models, and over questions where possible.
    """

    name: str
    source: str
    values: np.ndarray
    estimates: dict[str, Estimate] = field(default_factory=dict)


@dataclass
class Difference:
    """``first - second`` for one measure, with its interval over models and tests."""

    measure: str
    value: float | None
    interval: Interval | None
    p_bootstrap: float | None
    williams_t: float | None = None
    williams_p: float | None = None


@dataclass
class PairComparison:
    """Two benchmarks compared on the same contestants and downstream."""

    first: str
    second: str
    differences: dict[str, Difference]
    verdict: str


@dataclass
class CrossValidity:
    """What ``prb validity`` reports across benchmarks."""

    contestants: list[Contestant]
    downstream: str
    benchmarks: list[Benchmark]
    pairs: list[PairComparison]
    iters: int
    warnings: list[str]
    notes: list[str]


# ----------------------------------------------------------------------------- reading


def contestant_names(label: str, config: dict[str, Any]) -> set[str]:
    """Names a scores file may use for a run: its label, each identity argument's value
    (``pretrained=org/rm`` gives ``org/rm``) and that value's last path part (``rm``).

    Args:
        label: the run label.
        config: the results file's ``config``.
    """
    names = {label}
    args = as_dict(config.get("model_args"))
    for key in IDENTITY:
        value = args.get(key)
        if isinstance(value, str) and value:
            names.add(value)
            names.add(value.rstrip("/").rsplit("/", 1)[-1])
    return names


def headline_metric(entry: Any) -> str | None:
    """Which metric is the headline of one task's (or group's) results: ``score``, else ``acc``."""
    if not isinstance(entry, dict):
        return None
    for name in HEADLINE_METRICS:
        value = entry.get(f"{name},none")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return name
    return None


def headline(entry: Any) -> float | None:
    """The headline number of one task's (or group's) results: ``score``, else ``acc``."""
    name = headline_metric(entry)
    return None if name is None else float(entry[f"{name},none"])


@dataclass
class _Runs:
    down: dict[str, dict[str, Side]] = field(default_factory=lambda: defaultdict(dict))
    bench: dict[str, dict[str, Side]] = field(default_factory=lambda: defaultdict(dict))
    headline: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    tasks: set[str] = field(default_factory=set)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Compared task -> label -> the results file reporting it and its JSON (for per-item results).
    origin: dict[str, dict[str, tuple[Path, dict[str, Any]]]] = field(default_factory=lambda: defaultdict(dict))


def _read_runs(paths: list[Path], compare_with: list[str], notes: list[str]) -> _Runs:
    runs = _Runs()
    try:
        found = find_results(paths)
    except PRBError as exc:
        raise PRBError(str(exc).replace("prb compare:", "prb validity:", 1)) from None
    for path in found:
        try:
            data = _read_json(path)
        except SkipRun as exc:
            notes.append(str(exc))
            continue
        if not isinstance(data, dict):
            continue
        config = data.get("config")
        if not isinstance(config, dict):
            config = {}
        label = model_label(config)
        runs.configs[label] = config
        for task, side in read_benchmark(path, notes).items():
            runs.bench[task][label] = side
        for task, side in read_downstream(path, notes).items():
            runs.down[task][label] = side
        results = data.get("results")
        if not isinstance(results, dict):
            results = {}
        runs.tasks.update(name for name, entry in results.items() if headline(entry) is not None)
        for task in compare_with:
            value = headline(results.get(task))
            if value is not None:
                runs.headline[task][label] = value
                runs.origin[task][label] = (path, data)
    return runs


def _match_scores(scores: PublishedScores, contestants: list[Contestant], problems: list[str]
                  ) -> dict[str, dict[str, float]]:
    """Benchmark -> contestant label -> score; unmatched and ambiguous names go to ``problems``."""
    owners: dict[str, list[str]] = defaultdict(list)
    for c in contestants:
        for name in c.names:
            owners[name].append(c.label)
    lowered: dict[str, list[str]] = defaultdict(list)
    for name, labels in owners.items():
        lowered[name.casefold()].extend(labels)
    out: dict[str, dict[str, float]] = defaultdict(dict)
    claimed: dict[str, str] = {}
    unmatched: list[str] = []
    for name, values in scores.scores.items():
        labels = sorted(set(owners.get(name) or lowered.get(name.casefold()) or []))
        if not labels:
            unmatched.append(name)
            continue
        if len(labels) > 1:
            problems.append(f"prb validity: --scores {scores.path}: model '{name}' matches several contestants "
                            f"({'; '.join(labels)}); use the full run label")
            continue
        if labels[0] in claimed:
            problems.append(f"prb validity: --scores {scores.path}: '{name}' and '{claimed[labels[0]]}' are the same "
                            f"contestant ({labels[0]}); keep one")
            continue
        claimed[labels[0]] = name
        for bench, value in values.items():
            out[bench][labels[0]] = value
    problems.extend(_unmatched_lines(scores.path, unmatched, owners))
    return out


#: Unmatched names listed one line each (with a suggestion) before the rest are counted:
#: a leaderboard's whole list against a handful of runs would otherwise print a line per model.
SHOWN_UNMATCHED = 5


def _unmatched_lines(path: Path, names: list[str], owners: dict[str, list[str]]) -> list[str]:
    """One line per name of the scores file that matches no contestant, the first
    :data:`SHOWN_UNMATCHED` of them, then one line counting the rest."""
    lines = [f"prb validity: --scores {path}: model '{name}' matches no contestant{did_you_mean(name, owners)}; "
             "name it as its run label or its model/pretrained argument, or remove the row"
             for name in names[:SHOWN_UNMATCHED]]
    rest = names[SHOWN_UNMATCHED:]
    if rest:
        lines.append(f"prb validity: --scores {path}: {len(rest):,} more models match no contestant (the next: "
                     f"'{rest[0]}'); rows for models you did not run are not needed: remove them")
    return lines


def _missing_line(bench: str, source: str, have: set[str], contestants: list[Contestant]) -> str | None:
    missing = [c.label for c in contestants if c.label not in have]
    if not missing:
        return None
    shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    return (f"prb validity: benchmark {bench} ({source}) has no score for {len(missing)} of {len(contestants)} "
            f"contestants ({shown}); every benchmark must score the same models: add them, or leave those models' "
            "runs out")


# ----------------------------------------------------------------------------- statistics


def _pair(first: Benchmark, second: Benchmark, gain: np.ndarray, picks: np.ndarray) -> PairComparison:
    from scipy.stats import rankdata

    n = len(gain)
    diffs: dict[str, Difference] = {}
    for name, measure in MEASURES.items():
        a, b = measure(first.values, gain), measure(second.values, gain)
        point = None if a is None or b is None else a - b
        draws = batch(name, first.values[picks], gain[picks]) - batch(name, second.values[picks], gain[picks])
        diff = Difference(name, point, draw_interval(draws, point), bootstrap_p(draws) if point is not None else None)
        if name in ("pearson", "spearman") and point is not None:
            x1, x2, y = first.values, second.values, gain
            if name == "spearman":
                x1, x2, y = rankdata(x1), rankdata(x2), rankdata(y)
            r23 = MEASURES["pearson"](x1, x2)
            test = williams(float(np.corrcoef(y, x1)[0, 1]), float(np.corrcoef(y, x2)[0, 1]),
                            r23 if r23 is not None else math.nan, n)
            if test is not None:
                diff.williams_t, diff.williams_p = test
        diffs[name] = diff
    return PairComparison(first.name, second.name, diffs, _verdict(first, second, diffs["spearman"], n))


def _verdict(first: Benchmark, second: Benchmark, diff: Difference, n: int) -> str:
    a = first.estimates["spearman"].value
    b = second.estimates["spearman"].value
    if diff.value is None or a is None or b is None:
        return (f"{first.name} vs {second.name}: Spearman is undefined for one of them (no spread among the "
                f"{n} models), so they cannot be compared")
    ci = (f"95% interval over models [{diff.interval.low:+.2f}, {diff.interval.high:+.2f}]"
          if diff.interval else "no interval")
    test = (f"Williams' test on ranks p = {diff.williams_p:.2g}" if diff.williams_p is not None
            else f"no Williams' test (it needs 4 models or more, here {n})")
    facts = f"Spearman {a:.2f} vs {b:.2f}, difference {diff.value:+.2f}, {ci}, {test}"
    excludes = diff.interval is not None and (diff.interval.low > 0 or diff.interval.high < 0)
    significant = diff.williams_p is not None and diff.williams_p < ALPHA
    if excludes and significant:
        better, worse = (first.name, second.name) if diff.value > 0 else (second.name, first.name)
        return f"{better} predicts the downstream ranking better than {worse} on these {n} models ({facts})."
    if excludes or significant:
        return (f"With {n} models the evidence is mixed: one test separates {first.name} and {second.name}, the "
                f"other does not, so treat them as not told apart ({facts}).")
    return f"With {n} models the data cannot tell {first.name} and {second.name} apart ({facts})."


def _item_runs(task: str, origins: list[tuple[Path, dict[str, Any]]], notes: list[str]) -> list[ItemRun] | None:
    """Every contestant's per-item results of a compared task, or None (a note says why)."""
    out = []
    for path, data in origins:
        metric = headline_metric((data.get("results") or {}).get(task))
        try:
            out.append(read_item_run(path, data, task, metric or "score"))
        except SkipRun as exc:
            notes.append(f"--compare-with {task}: intervals over models only; {exc}")
            return None
    return out


def _item_intervals(bench: Benchmark, runs: list[ItemRun], down: list[Side], gain: np.ndarray, iters: int,
                    seed: int, notes: list[str]) -> dict[str, Interval | None]:
    """Measure -> interval resampling the benchmark's items (within each subtask) and the downstream's
    questions; says in ``bench.source`` what was resampled and how many."""
    try:
        scores, items, leaves = item_draws(runs, iters, seed + 7)
    except SkipRun as exc:
        notes.append(f"--compare-with {bench.name}: intervals over models only; {exc}")
        return {}
    gains, questions = downstream_draws(down, iters, seed + 1)
    within = f" within each of its {leaves} subtasks" if leaves > 1 else ""
    bench.source = (f"runs: headline score, resampled over models, and over its {items} items{within} with the "
                    f"downstream's {questions} questions")
    out: dict[str, Interval | None] = {}
    for name, measure in MEASURES.items():
        out[name] = draw_interval(batch(name, scores, gains), measure(bench.values, gain))
    return out


# ----------------------------------------------------------------------------- the report


def cross_validity(paths: list[Path], scores: PublishedScores | None = None, compare_with: list[str] | None = None,
                   benchmark: list[str] | None = None, downstream: list[str] | None = None,
                   iters: int = ITERS, seed: int = SEED) -> CrossValidity:
    """The cross-benchmark report for the runs under ``paths``.

    Args:
        paths: lm-eval output folders or results files (downstream runs, benchmark runs).
        scores: published scores, or None.
        compare_with: tasks or groups of the runs to use as further benchmarks (headline number).
        benchmark, downstream: as plain ``prb validity`` (None: the one most models ran).
        iters: bootstrap draws per interval.
        seed: generator seed (the report is reproducible).
    """
    compare_with = list(compare_with or [])
    notes: list[str] = []
    runs = _read_runs(paths, compare_with, notes)
    d_group = pick_group(runs.down, downstream, "downstream", "--downstream")
    d_name = group_name(d_group)
    contestants = [Contestant(label, contestant_names(label, runs.configs.get(label, {})), side.mean)
                   for label, side in sorted(d_group.items()) if math.isfinite(side.mean)]
    problems: list[str] = []
    benches: list[Benchmark] = []
    main_models: list[Model] | None = None
    item_runs: dict[str, list[ItemRun] | None] = {}
    if runs.bench or benchmark:
        b_group = pick_group(runs.bench, benchmark, "benchmark", "--benchmark")
        b_name = group_name(b_group)
        for label in sorted(set(b_group) - {c.label for c in contestants}):
            notes.append(f"{label}: ran {b_name} but no {d_name}; left out")
        line = _missing_line(b_name, "runs", set(b_group), contestants)
        if line:
            problems.append(line)
        else:
            main_models = [Model(c.label, b_group[c.label], d_group[c.label]) for c in contestants]
            benches.append(Benchmark(b_name, "runs: accuracy, resampled over questions and models",
                                     np.array([m.benchmark.mean for m in main_models])))  # type: ignore[union-attr]
    for task in compare_with:
        have = runs.headline.get(task, {})
        if not have:
            problems.append(f"prb validity: --compare-with {task}: no run under these folders reports it (a task or "
                            f"group with a score or acc){did_you_mean(task, runs.tasks)}; run it with the "
                            "contestants' --model and --model_args")
            continue
        line = _missing_line(task, "runs", set(have), contestants)
        if line:
            problems.append(line)
            continue
        benches.append(Benchmark(task, "runs: headline score, resampled over models",
                                 np.array([have[c.label] for c in contestants])))
        item_runs[task] = _item_runs(task, [runs.origin[task][c.label] for c in contestants], notes)
    if scores is not None:
        matched = _match_scores(scores, contestants, problems)
        for published in scores.benchmarks:
            line = _missing_line(published, f"--scores {scores.path.name}", set(matched.get(published, {})),
                                 contestants)
            if line:
                problems.append(line)
                continue
            benches.append(Benchmark(published, f"--scores {scores.path.name}, resampled over models",
                                     np.array([matched[published][c.label] for c in contestants])))
    names = [b.name for b in benches]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"prb validity: benchmark '{name}' is given twice (runs and --scores, or twice in the file); "
                        "rename one")
    if problems:
        raise PRBError("\n".join(dict.fromkeys(problems)))
    if len(benches) < 2:
        raise PRBError(f"prb validity: comparing benchmarks needs two or more; found {len(benches)} "
                       f"({', '.join(names) or 'none'}); add --compare-with TASK or --scores FILE")
    gain = np.array([c.gain for c in contestants])
    n = len(contestants)
    warnings: list[str] = []
    if n < MIN_MODELS:
        warnings.append(f"only {n} models: with fewer than {MIN_MODELS} a correlation across models says almost "
                        "nothing, and no test can tell two benchmarks apart; compare more models")
    picks = np.random.default_rng(seed).integers(0, max(n, 1), size=(iters, n))
    question_level = estimates(main_models, iters, seed) if main_models and n >= 2 else {}
    for bench in benches:
        item_level = {}
        if n >= 2 and item_runs.get(bench.name):
            item_level = _item_intervals(bench, item_runs[bench.name], [d_group[c.label] for c in contestants],  # type: ignore[arg-type]
                                         gain, iters, seed, notes)
        for name, measure in MEASURES.items():
            point = measure(bench.values, gain) if n >= 2 else None
            by_models = draw_interval(batch(name, bench.values[picks], gain[picks]), point) if n >= 2 else None
            by_questions = question_level[name].by_questions if bench is benches[0] and question_level else None
            bench.estimates[name] = Estimate(point, item_level.get(name, by_questions), by_models)
    pairs = [_pair(a, b, gain, picks) for i, a in enumerate(benches) for b in benches[i + 1:]]
    return CrossValidity(contestants, d_name, benches, pairs, iters, warnings, notes)

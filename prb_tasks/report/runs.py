"""Find lm-eval output folders and read back the runs of prb tasks in them.

A run is one ``results_<stamp>.json`` with the ``samples_<task>_<stamp>.jsonl`` files
(``--log_samples``) and, for ``prb-judge``, the ``usage_<stamp>.json`` written beside
it. Folders can come from any backend and any machine, so nothing here trusts them:
a file that is not what lm-eval writes is skipped with one line in ``notes``, never
a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.common.textfiles import json_lines, too_deep
from prb_tasks.report.source import data_source

_SCALAR_TYPES = ("multiple_choice", "loglikelihood")
#: In the note for a finished run that compare leaves out (``prb compare`` counts them by it).
NOT_PAIRWISE = "not a task of pairwise verdicts or scores"


@dataclass
class Family:
    """One task group (or a task run on its own) inside one run.

    Attributes:
        name: group name, e.g. ``personalized_rb``.
        subtasks: its leaf tasks.
        kind: ``judge`` (generate_until) or ``scalar`` (multiple_choice).
        source: where its data came from (see :func:`prb_tasks.report.source.data_source`).
        samples: subtask -> logged samples; empty without ``--log_samples``.
        setting: what the model was shown, as its tasks declare it (:mod:`prb_tasks.report.settings`);
            a family that declares none is its own setting (its name), compared with nothing else.
        benchmark: the task folder it belongs to (``personalized_rb``, ``personalllm``...),
            so equal settings of different benchmarks are never mixed.
    """

    name: str
    subtasks: list[str]
    kind: str
    source: str
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    setting: str = ""
    benchmark: str = ""

    def __post_init__(self) -> None:
        self.setting = self.setting or self.name
        self.benchmark = self.benchmark or self.name

    @property
    def logged(self) -> bool:
        return bool(self.samples)


@dataclass
class Run:
    """One results file of lm-eval with what was written beside it.

    Attributes:
        path: the results file.
        label: a short, secret-free name of the model that produced it.
        backend: lm-eval model name (``prb-judge``, ``prb-rm``, ``hf``, ...).
        results: lm-eval's ``results`` section (task or group -> metrics).
        families: our task groups in the file.
        usage: ``prb-judge``'s usage summary, when the run wrote one.
        limit: lm-eval's ``--limit``, if one was given.
    """

    path: Path
    label: str
    backend: str
    results: dict[str, dict[str, Any]]
    families: list[Family]
    usage: dict[str, Any] | None = None
    limit: float | None = None


class SkipRun(Exception):
    """A results file that cannot be used; the message is the one line to print."""


def model_label(config: dict[str, Any]) -> str:
    """``model (k=v, ...)`` from a results file's ``config``: every argument that changes
    the result (:func:`prb_tasks.report.runlabel.run_label`), without secrets."""
    from prb_tasks.report.runlabel import run_label

    return run_label(str(config.get("model", "?")), config.get("model_args"), config.get("gen_kwargs"))


def find_results(paths: list[Path]) -> list[Path]:
    """Every ``results_*.json`` under ``paths`` (files are taken as given), oldest first."""
    files: set[Path] = set()
    for root in paths:
        if root.is_file():
            files.add(root)
        elif root.is_dir():
            try:
                files.update(p for p in root.rglob("results_*.json") if p.is_file())
            except OSError as exc:
                raise PRBError(f"prb compare: cannot read folder {root}: {exc.strerror or exc}") from None
        else:
            raise PRBError(f"prb compare: '{root}' does not exist "
                           "(give lm-eval output folders or results_*.json files)")
    return sorted(files, key=lambda p: (p.stat().st_mtime, str(p)))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SkipRun(f"skipped {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError:
        why = "half-written? re-run that evaluation" if path.name.startswith("results_") else "not a results file"
        raise SkipRun(f"skipped {path}: not valid JSON ({why})") from None
    except RecursionError:
        raise SkipRun(f"skipped {path}: {too_deep('it')}") from None


def iter_samples(path: Path) -> Iterator[dict[str, Any]]:
    """The logged samples of one samples file, one at a time.

    Raises:
        SkipRun: the file cannot be read or a line is not an lm-eval sample.
    """
    for lineno, sample in json_lines(path, "samples file", "half-written? re-run that evaluation", SkipRun,
                                     prefix=f"skipped {path.parent}: "):
        if not isinstance(sample, dict) or not isinstance(sample.get("doc"), dict):
            raise SkipRun(f"skipped {path.parent}: {path.name} line {lineno} is not an lm-eval sample")
        yield sample


def _read_samples(path: Path) -> list[dict[str, Any]]:
    return list(iter_samples(path))


def _leaf_families(data: dict[str, Any]) -> dict[str, list[str]]:
    """Groups whose members are tasks, plus tasks run outside any group."""
    tree = {k: list(v or []) for k, v in (data.get("group_subtasks") or {}).items() if isinstance(k, str)}
    groups = {k for k, v in tree.items() if v}
    members = {t for v in tree.values() for t in v}
    families = {name: subs for name, subs in tree.items() if subs and not set(subs) & groups}
    for name, subs in tree.items():
        if not subs and name not in members:
            families[name] = [name]
    for name in data.get("results") or {}:  # tasks run on their own, whether listed or not
        if name not in tree and name not in members:
            families[name] = [name]
    return families


def _kind(configs: dict[str, Any], subtasks: list[str], samples: dict[str, list[dict[str, Any]]]) -> str | None:
    """``judge`` or ``scalar`` for a pairwise family, None for anything else (e.g. best-of-N)."""
    from prb_tasks.judge.reply_forms import PAIRWISE, form_name

    docs = [s["doc"] for rows in samples.values() for s in rows[:1]]
    if any(isinstance(d.get("choices"), list) and len(d["choices"]) != 2 for d in docs):
        return None
    # A judge whose replies are not `Result: A/B` verdicts (RM-Bench's boxed verdicts, 1-10 ratings) has
    # its own metrics; read as pairwise verdicts its replies would give a meaningless acc.
    if any(form_name(d) != PAIRWISE for d in docs):
        return None
    types = {str((configs.get(t) or {}).get("output_type", "")) for t in subtasks}
    if types == {"generate_until"}:
        return "judge" if not docs or all("chosen_position" in d for d in docs) else None
    if types and types <= set(_SCALAR_TYPES):
        return "scalar"
    if docs and all("chosen_position" in d for d in docs):
        return "judge"
    if docs and all(isinstance(d.get("choices"), list) for d in docs):
        return "scalar"
    return None


def _is_ours(name: str, subtasks: list[str], samples: dict[str, list[dict[str, Any]]]) -> bool:
    from prb_tasks.common.taskindex import plugin_task_names

    ours = plugin_task_names()
    if name in ours or any(t in ours for t in subtasks):
        return True
    return any("pair_key" in rows[0]["doc"] for rows in samples.values() if rows)


def _declared(subtasks: list[str], configs: dict[str, Any]) -> tuple[str, str]:
    """(setting, benchmark) of a family; empty strings where nothing declares them."""
    from prb_tasks.report.settings import benchmark_of, setting_of

    settings = {setting_of(t, configs.get(t)) for t in subtasks}
    setting = settings.pop() if len(settings) == 1 else None
    return setting or "", benchmark_of(subtasks[0]) or ""


def _sample_files(results_path: Path, task: str) -> Path:
    stamp = results_path.stem.removeprefix("results_")
    return results_path.parent / f"samples_{task}_{stamp}.jsonl"


def read_run(path: Path, notes: list[str], skip: Callable[[dict[str, Any]], bool] | None = None) -> Run | None:
    """The run in one results file, or None when it holds none of our tasks.

    Args:
        path: a ``results_*.json`` file.
        notes: lines for the user (runs without sample logs, families skipped).
        skip: given a task's config (from the results file), true to leave that task's
            family out before its samples are read (large files another reader streams).

    Raises:
        SkipRun: the file or its sample logs are unusable (the message says why).
    """
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise SkipRun(f"skipped {path}: not an lm-eval results file (no 'results' section)")
    configs = data.get("configs") or {}
    config = data.get("config") or {}
    n_samples = data.get("n-samples") or {}
    families: list[Family] = []
    for name, subtasks in _leaf_families(data).items():
        if skip is not None and any(skip(configs.get(t) or {}) for t in subtasks):
            continue
        files = {t: _sample_files(path, t) for t in subtasks}
        present = {t: f for t, f in files.items() if f.is_file()}
        if present and len(present) < len(files):
            missing = ", ".join(sorted(t for t in files if t not in present))
            raise SkipRun(f"skipped {path.parent}: sample logs of {missing} are missing "
                          "(half-written? re-run that evaluation)")
        samples = {t: _read_samples(f) for t, f in present.items()}
        for task, rows in samples.items():
            expected = (n_samples.get(task) or {}).get("effective")
            if isinstance(expected, int) and len(rows) != expected:
                raise SkipRun(f"skipped {path.parent}: {files[task].name} has {len(rows)} of {expected} samples "
                              "(half-written? re-run that evaluation)")
        if not _is_ours(name, subtasks, samples):
            continue
        kind = _kind(configs, subtasks, samples)
        if not samples and "acc,none" not in (data["results"].get(name) or {}):
            kind = None
        if kind is None:
            notes.append(f"{name} in {path}: {NOT_PAIRWISE} (e.g. best-of-N or a planner stage); not compared")
            continue
        recorded = (data.get("prb") or {}).get("data_sources") if isinstance(data.get("prb"), dict) else None
        setting, benchmark = _declared(subtasks, configs)
        families.append(Family(name, subtasks, kind, data_source(configs, subtasks[0], recorded), samples,
                               setting, benchmark))
    if not families:
        return None
    usage_path = path.with_name(path.name.replace("results_", "usage_", 1))
    usage = None
    if usage_path.is_file():
        try:
            usage = json.loads(usage_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            notes.append(f"{usage_path}: unreadable usage file; cost and latency of that run are not shown")
    limit = config.get("limit")
    return Run(path, model_label(config), str(config.get("model", "?")), data["results"], families,
               usage if isinstance(usage, dict) else None, float(limit) if isinstance(limit, (int, float)) else None)


def load_runs(paths: list[Path], notes: list[str]) -> list[Run]:
    """Every usable run of prb tasks under ``paths``, oldest first.

    Args:
        paths: output folders or results files given on the command line.
        notes: receives one line per skipped file or run without sample logs.
    """
    runs: list[Run] = []
    for path in find_results(paths):
        try:
            run = read_run(path, notes)
        except SkipRun as exc:
            notes.append(str(exc))
            continue
        if run is None:
            continue
        for fam in run.families:
            # A paper's number (backend "published") has no samples to log: nothing to re-run.
            if not fam.logged and run.backend != "published":
                notes.append(f"{run.label} on {fam.name} ({path.parent}): no sample logs, so no intervals, "
                             "pair comparisons or drill-down; re-run it with --log_samples")
        runs.append(run)
    return runs

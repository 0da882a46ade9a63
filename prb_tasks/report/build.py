"""Assemble a report: runs -> entries -> sections of comparable models -> statistics.

A *section* holds every model run on one benchmark, one setting (judges and scalar RMs
shown the same input, as their tasks declare it, e.g. ``personalized_rb`` and
``personalized_rb_scalar``: question only) and one data source; models are compared
with each other only inside a section.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.report.formatting import pct
from prb_tasks.report.ladder import Ladder, ladders
from prb_tasks.report.names import assign
from prb_tasks.report.outcomes import Entry, build_entry
from prb_tasks.report.pairwise import Comparison, Ranked, compare_all, kappa_matrix, ranking, shared_keys
from prb_tasks.report.peruser import PerUser, per_user
from prb_tasks.report.predicts import Predicts
from prb_tasks.report.runs import Family, Run, load_runs
from prb_tasks.report.seeds import fold_seeds
from prb_tasks.report.settings import DIAGNOSTIC
from prb_tasks.report.settings import describe as describe_setting
from prb_tasks.report.settings import rank as setting_rank
from prb_tasks.report.source import LOCAL_PREFIX, describe
from prb_tasks.report.summary import Summary, summarize


@dataclass
class Section:
    """Models compared with each other: one setting on one data source."""

    slug: str
    setting: str
    source: str
    title: str
    diagnostic: bool
    entries: list[Entry]
    summaries: list[Summary]
    comparisons: list[Comparison]
    kappa: list[list[float | None]]
    ranking: list[Ranked]
    shared_all: int
    union: int
    #: entry id -> why it is not ranked (a large share of judgments skipped or failed).
    set_apart: dict[str, str] = field(default_factory=dict)
    #: the per-user blocks (distribution, who is helped, whose ranking differs); None
    #: when the data names no users.
    per_user: PerUser | None = None


@dataclass
class Report:
    """Everything ``prb compare`` writes."""

    sections: list[Section]
    ladders: list[Ladder]
    notes: list[str]
    generated: str
    inputs: list[str]
    charts: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: block 4, how much accuracy predicts (set by ``prb compare``, which has the folders).
    predicts: Predicts | None = None

    @property
    def entries(self) -> list[Entry]:
        return [e for s in self.sections for e in s.entries]


def _stamp(run: Run) -> str:
    raw = run.path.stem.removeprefix("results_")
    match = re.match(r"(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})", raw)
    return f"{match.group(1)} {match.group(2)}:{match.group(3)}:{match.group(4)}" if match else run.path.parent.name


def _labels(runs: list[Run], names: dict[int, str] | None = None) -> dict[tuple[int, str], str]:
    """Model labels (a name the user gave wins), made unique where one model ran the same family twice."""
    for i, name in (names or {}).items():
        runs[i].label = name
    seen = Counter((run.label, fam.name) for run in runs for fam in run.families)
    labels = {}
    for i, run in enumerate(runs):
        for fam in run.families:
            twice = seen[(run.label, fam.name)] > 1
            labels[(i, fam.name)] = f"{run.label} [run {_stamp(run)}]" if twice else run.label
    return labels


def _name_task_variants(entries: list[Entry]) -> None:
    """Add the task to the labels one model shares in a section across tasks (a judge's
    both-orders ``personalized_rb`` and its ``personalized_rb_official`` score differently:
    two rows, never one name)."""
    tasks: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        tasks[entry.label].add(entry.family.name)
    for entry in entries:
        if len(tasks[entry.label]) > 1:
            entry.label = f"{entry.label} [{entry.family.name}]"


def _key_of(name: str, runs: list[Run]) -> tuple[str, str] | None:
    """(benchmark, setting) a judge's ``--task`` name brings along (None for a scalar task,
    which selects only itself): from a family found in the runs, or the installed YAMLs."""
    from prb_tasks.common.taskindex import groups
    from prb_tasks.report.settings import benchmark_of, declared

    for run in runs:
        for fam in run.families:
            if fam.name == name:
                return (fam.benchmark, fam.setting) if fam.kind == "judge" else None
    entry = next((g for g in groups() if g.name == name), None)
    task = entry.subtasks[0] if entry is not None and entry.subtasks else None
    if entry is None or task is None or task not in declared() or "prb-judge" not in entry.backends:
        return None
    return benchmark_of(task) or "", declared()[task]


def _matches(family: Family, tasks: list[str], keys: dict[str, tuple[str, str] | None]) -> bool:
    """A family is selected by its own name or by a judge task of the same benchmark and setting."""
    return family.name in tasks or any(keys[t] == (family.benchmark, family.setting) for t in tasks)


def _slug(setting: str, source: str, taken: set[str]) -> str:
    """A file- and URL-safe id, unique in the report."""
    if source.startswith(LOCAL_PREFIX):
        # Chart files get shared with figures: a local copy is named by a digest of its
        # path, never by the path (a home folder, a private project name).
        source = "local-" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:8]
    base = (re.sub(r"[^A-Za-z0-9_]+", "-", setting) + "--" + re.sub(r"[^A-Za-z0-9_]+", "-", source).strip("-"))[:90]
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug


#: A run with more than this share of its judgments skipped or failed is not ranked: its
#: accuracy counts them wrong, so it measures the run (a dead server, a spent budget), not the model.
SET_APART_SHARE = 0.20


def set_apart_reason(summary: Summary) -> str | None:
    """Why a model's run is set apart from the ranking, or None to rank it.

    Args:
        summary: the model's summary (its ``skip_rate`` and ``error_rate``).
    """
    skipped = summary.metrics.get("skip_rate") or 0.0
    failed = summary.metrics.get("error_rate") or 0.0
    if skipped + failed <= SET_APART_SHARE:
        return None
    parts = ([f"{pct(skipped)}% of its judgments skipped"] if skipped else []) + \
        ([f"{pct(failed)}% failed"] if failed else [])
    cut = "cut short: " if skipped >= failed else ""
    return (f"{cut}{' and '.join(parts)} (more than {SET_APART_SHARE:.0%}; its accuracy counts them wrong, so it "
            "measures the run, not the model); re-run it to finish (answered judgments come from the cache)")


def _section(benchmark: str, setting: str, source: str, entries: list[Entry], taken: set[str]) -> Section:
    summaries = [summarize(e) for e in entries]
    set_apart = {s.id: why for s in summaries if (why := set_apart_reason(s)) is not None}
    logged = [e for e in entries if e.logged]
    comparisons = compare_all([e for e in logged if e.id not in set_apart])
    accs = {s.id: (s.acc.value if s.acc else None) for s in summaries if s.id not in set_apart}
    union = set().union(*(e.keys for e in logged)) if logged else set()
    diagnostic = setting in DIAGNOSTIC or any(e.variant == "oracle" for e in entries)
    return Section(
        slug=_slug(f"{benchmark}--{setting}", source, taken), setting=setting, source=source,
        title=f"{benchmark}, {describe_setting(setting)}, on the {describe(source)}", diagnostic=diagnostic,
        entries=entries,
        summaries=summaries, comparisons=comparisons, kappa=kappa_matrix(logged),
        ranking=ranking(accs, comparisons), shared_all=len(shared_keys(logged)), union=len(union),
        set_apart=set_apart,
    )


def build_report(paths: list[Path], tasks: list[str] | None = None,
                 names: list[tuple[str, str, str]] | None = None) -> Report:
    """Read every run under ``paths`` and compute the whole report.

    Args:
        paths: lm-eval output folders or results files.
        names: (RUN, NAME, where given) from ``--label`` / ``--names`` (:mod:`prb_tasks.report.names`).
        tasks: keep only these task families (a judge task's name also selects every family
            of the same benchmark and setting, e.g. ``personalized_rb`` its ``_scalar`` twin).
    """
    notes: list[str] = []
    runs = load_runs(paths, notes)
    labels = _labels(runs, assign(runs, names or []))
    found = sorted({fam.name for run in runs for fam in run.families})
    if tasks:
        wanted = [t.strip() for spec in tasks for t in spec.split(",") if t.strip()]
        keys = {t: _key_of(t, runs) for t in wanted}
        for run in runs:
            run.families = [f for f in run.families if _matches(f, wanted, keys)]
        if found and not any(run.families for run in runs):
            raise PRBError(f"prb compare: no runs of {', '.join(wanted)} under the given folders; "
                           f"found: {', '.join(found)}")
    grouped: dict[tuple[str, str, str], list[Entry]] = defaultdict(list)
    counter = 0
    for i, run in enumerate(runs):
        for fam in run.families:
            counter += 1
            entry = build_entry(f"m{counter}", labels[(i, fam.name)], run, fam)
            grouped[(fam.benchmark, entry.source, entry.setting)].append(entry)
    for group, entries in grouped.items():
        # Runs of one model trained with several seeds are one row with the seeds' spread.
        grouped[group] = entries = fold_seeds(entries, notes)
        _name_task_variants(entries)
    taken: set[str] = set()
    # Within a benchmark and source, sections follow the ladder line (question only -> ... -> oracle).
    in_order = sorted(grouped.items(), key=lambda item: (item[0][0], item[0][1], setting_rank(item[0][2])))
    sections = [_section(benchmark, setting, source, entries, taken)
                for (benchmark, source, setting), entries in in_order]
    for section in sections:
        section.per_user = per_user(section, sections)
        logged = [e for e in section.entries if e.logged]
        apart = [(a, b) for i, a in enumerate(logged) for b in logged[i + 1:] if not set(a.keys) & set(b.keys)]
        if apart:
            a, b = apart[0]
            notes.append(f"{section.title}: {len(apart)} combination(s) of two models share no pairs "
                         "and are not compared, e.g. "
                         f"{a.label} (keys like {a.keys[0]!r}) and {b.label} ({b.keys[0]!r}); runs made with "
                         "different prb versions name pairs differently: re-run the older one")
        sizes = {len(e.keys) for e in section.entries if e.logged}
        if len(sizes) > 1:
            notes.append(f"{section.title}: models were scored on different pairs ({min(sizes)}-{max(sizes)}); "
                         f"each comparison uses the pairs both share ({section.shared_all} shared by all)")
    return Report(
        sections=sections,
        ladders=ladders([e for s in sections for e in s.entries if e.id not in s.set_apart]),
        notes=notes,
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        inputs=[str(p) for p in paths],
    )

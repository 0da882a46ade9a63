"""Fold runs that differ only by the training seed into one row (``prb train --seeds N``).

``prb train --seeds N --out OUT`` writes ``OUT/seed-0`` ... ``OUT/seed-<N-1>``; their
evaluations carry the folder in their model arguments, so their labels differ only in that
``seed-<n>`` component. Such scalar runs (``prb-rm``, ``prb-method``) of one task in one
section become one row, labelled with ``seed-*`` and the number of seeds:

- each pair's score is the mean of the seeds' scores on it (the pairs every seed scored),
  so the row's interval resamples what the section resamples (users, or pairs) of those
  seed-averaged scores: how much the evaluated users move the number;
- beside it, the spread between seeds: the standard deviation (and range) of the seeds'
  own accuracies on those pairs: how much the training run moves the number.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections import defaultdict

import numpy as np

from prb_tasks.report.outcomes import Entry

#: A checkpoint folder written by ``prb train --seeds`` inside a label.
SEED = re.compile(r"(?<![A-Za-z0-9_])seed-(\d+)(?![A-Za-z0-9_])")
#: Per-pair fields of an :class:`Entry` (aligned with ``keys``), cut to the shared pairs.
_PER_PAIR = ("keys", "subset", "category", "user", "tags", "w_chosen", "w_rejected", "docs", "responses")
#: Per-pair numbers averaged over the seeds.
_AVERAGED = ("score", "s_chosen", "s_rejected")
LEGEND = ("rows marked [N seeds]: runs that differ only by prb train's --seed (checkpoint folders seed-0, "
          "seed-1, ...), folded: each pair's score is the mean over the seeds, the interval resamples the "
          "section's users (or pairs) of those mean scores, and 'sd' is the standard deviation of the seeds' "
          "own accuracies on the pairs all of them scored (the spread between training runs)")


def seed_key(entry: Entry) -> str | None:
    """The label with its seed folder replaced by ``seed-*`` (None: no seed folder in it)."""
    return SEED.sub("seed-*", entry.label) if SEED.search(entry.label) else None


def _take(values: object, picks: list[int]) -> object:
    if isinstance(values, np.ndarray):
        return values[picks] if len(values) else values
    assert isinstance(values, list)
    return [values[i] for i in picks] if values else values


def fold(entries: list[Entry]) -> Entry:
    """One entry for the seeds' runs ``entries`` (same task, labels equal but for the seed).

    Args:
        entries: the runs of one model trained with different seeds, each logged.
    """
    shared = [k for k in entries[0].keys if all(k in e.index for e in entries[1:])]
    first = entries[0]
    picks = [first.index[k] for k in shared]
    changes: dict[str, object] = {name: _take(getattr(first, name), picks) for name in _PER_PAIR}
    accuracies = []
    for name in _AVERAGED:
        columns = [np.asarray(getattr(e, name), float) for e in entries]
        if all(len(c) == len(e.keys) for c, e in zip(columns, entries)):
            stacked = np.stack([c[[e.index[k] for k in shared]] for c, e in zip(columns, entries)])
            changes[name] = stacked.mean(axis=0)
            if name == "score":
                accuracies = [float(row.mean()) for row in stacked] if len(shared) else []
    spread = statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0
    seeds = sorted(int(m.group(1)) for e in entries if (m := SEED.search(e.label)))
    label = (f"{SEED.sub('seed-*', first.label)} [{len(entries)} seeds {','.join(map(str, seeds))}: sd "
             f"{100 * spread:.1f}, range {100 * min(accuracies, default=0):.1f}-"
             f"{100 * max(accuracies, default=0):.1f}]")
    return dataclasses.replace(first, label=label, **changes)  # type: ignore[arg-type]


def fold_seeds(entries: list[Entry], notes: list[str]) -> list[Entry]:
    """``entries`` with every group of seed runs (module docstring) folded into one.

    Args:
        entries: one section's entries.
        notes: the report's notes; the legend line is added once when something was folded.
    """
    groups: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in entries:
        key = seed_key(entry)
        if key is not None and entry.kind == "scalar" and entry.logged:
            groups[(entry.family.name, key)].append(entry)
    folded = {id(group[0]): fold(group) for group in groups.values() if len(group) > 1}
    gone = {id(e) for group in groups.values() if len(group) > 1 for e in group[1:]}
    if folded and LEGEND not in notes:
        notes.append(LEGEND)
    return [folded.get(id(e), e) for e in entries if id(e) not in gone]

"""Custom (bring-your-own) preference files as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from prb_tasks.data.counts import read_copy
from prb_tasks.data.custom.sources import EXAMPLE
from prb_tasks.data.families import BenchmarkFamily


@dataclass
class _Counts:
    """What ``prb data validate`` says about a preference file, counted a user at a time."""

    users: int = 0
    single: int = 0
    preferences: int = 0
    chosen_a: int = 0
    no_reason: int = 0
    no_tags: int = 0
    tags: Counter[str] = field(default_factory=Counter)


def _count(path: Path) -> _Counts:
    from prb_tasks.data.custom.reader import iter_users

    counts = _Counts()
    for user in iter_users(path):  # one user at a time: a large file is checked without holding it
        counts.users += 1
        counts.single += len(user.preferences) == 1
        for p in user.preferences:
            counts.preferences += 1
            counts.chosen_a += p.chosen_response == "response_A"
            counts.no_reason += not p.reason.strip()
            counts.no_tags += not p.value_alignment
            counts.tags.update(p.value_alignment)
    return counts


def validate(path: Path, bundled: bool = False) -> int:
    """Check a bring-your-own preference file; print users, preferences and tags.

    Args:
        path: the ``.json`` / ``.jsonl`` file.
        bundled: unused (the bundled example is checked like any file).
    """
    if not path.exists():
        print(f"prb: '{path}' does not exist; pass your preference file (.jsonl or .json, see "
              f"docs/your-data.md), or '{EXAMPLE}' for the bundled one", file=sys.stderr)
        return 2
    counts, code = read_copy(path, _count, want="file")
    if counts is None:
        return code
    tags = counts.tags
    print(f"{path}: ok")
    print(f"  users: {counts.users} ({counts.single} with a single preference, judged with no history)")
    print(f"  preferences: {counts.preferences} (chosen is response_A in {counts.chosen_a}, response_B in "
          f"{counts.preferences - counts.chosen_a})")
    print(f"  without a reason: {counts.no_reason}; without value_alignment tags: {counts.no_tags}")
    if tags:
        print(f"  tags ({len(tags)}): " + ", ".join(f"{t} {n}" for t, n in sorted(tags.items())))
    return 0


def looks_like(path: Path) -> bool:
    """A preference file: a ``.json`` or ``.jsonl`` file, or such a name that does not exist yet
    (``prb data validate my_prefs.jsonl`` before the file is made: the preference file's hint,
    not the benchmark folder's)."""
    return path.suffix in (".json", ".jsonl") and (path.is_file() or not path.exists())


def _example() -> Path:
    from prb_tasks.data.custom.sources import example_path

    return example_path()


FAMILY = BenchmarkFamily(
    name="custom",
    order=30,
    validate=validate,
    documents=("prb_tasks.documents.custom", "prb_tasks.documents.fewshot"),
    options="prb_tasks.documents.custom:CustomOptions",
    task_folders=("personalized_custom", "fewshot"),
    commands=frozenset({"validate", "audit", "train"}),
    data_is_file=True,
    detect=looks_like,
    detect_order=10,
    bundled=EXAMPLE,
    bundled_path=_example,
    audit="prb_tasks.documents.custom:audit_docs",
    describe="a preference file (.json/.jsonl) or 'example'",
    train="prb_tasks.train.sources:custom",
    fewshot="prb_tasks.documents.fewshot:custom_data",
    users_have="a custom file's users have what the file gives them (\"demographics\", \"profile\")",
)

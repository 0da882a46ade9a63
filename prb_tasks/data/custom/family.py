"""Custom (bring-your-own) preference files as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from prb_tasks.data.counts import read_copy
from prb_tasks.data.custom.sources import EXAMPLE
from prb_tasks.data.families import BenchmarkFamily


def validate(path: Path, bundled: bool = False) -> int:
    """Check a bring-your-own preference file; print users, preferences and tags.

    Args:
        path: the ``.json`` / ``.jsonl`` file.
        bundled: unused (the bundled example is checked like any file).
    """
    from prb_tasks.data.custom.reader import read_users

    if not path.exists():
        print(f"prb: '{path}' does not exist; pass your preference file (.jsonl or .json, see "
              f"docs/your-data.md), or '{EXAMPLE}' for the bundled one", file=sys.stderr)
        return 2
    users, code = read_copy(path, read_users, want="file")
    if users is None:
        return code
    prefs = [p for u in users for p in u.preferences]
    tags = Counter(t for p in prefs for t in p.value_alignment)
    chosen_a = sum(p.chosen_response == "response_A" for p in prefs)
    single = sum(len(u.preferences) == 1 for u in users)
    print(f"{path}: ok")
    print(f"  users: {len(users)} ({single} with a single preference, judged with no history)")
    print(f"  preferences: {len(prefs)} (chosen is response_A in {chosen_a}, response_B in {len(prefs) - chosen_a})")
    print(f"  without a reason: {sum(not p.reason.strip() for p in prefs)}; "
          f"without value_alignment tags: {sum(not p.value_alignment for p in prefs)}")
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

"""PRISM as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

import os
from pathlib import Path

from prb_tasks.data.counts import read_copy
from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.data.prism.constants import (
    CONVERSATIONS,
    HF_REPO,
    METADATA,
    PUBLISHED_CONVERSATIONS,
    PUBLISHED_PEOPLE,
    SURVEY,
    UTTERANCES,
)


def validate(folder: Path, bundled: bool = False) -> int:
    """Check a PRISM copy; print people, conversations, pairs and what gave no pair.

    Args:
        folder: the copy's folder.
        bundled: unused (PRISM ships no sample).
    """
    from prb_tasks.data.people import summary_lines
    from prb_tasks.data.prism.reader import read_prism

    copy, code = read_copy(folder, read_prism)
    if copy is None:
        return code
    print(f"{folder}: ok")
    print(f"  surveyed: {copy.surveyed} (the release has {PUBLISHED_PEOPLE}); conversations: {copy.conversations} "
          f"(the release has {PUBLISHED_CONVERSATIONS})")
    for line in summary_lines(copy.people, copy.skipped):
        print(f"  {line}")
    return 0


def looks_like(path: Path) -> bool:
    """A PRISM copy, whole or not: one of its files (``survey.jsonl``, ``conversations.jsonl``,
    ``utterances.jsonl``) in the folder, so a copy missing one is checked as PRISM and told which."""
    # lexists: a named pipe in a file's place is still PRISM's layout; reading it then says what it is.
    names = (SURVEY, CONVERSATIONS, UTTERANCES)
    return any(os.path.lexists(path / name) and not (path / name).is_dir() for name in names)


FAMILY = BenchmarkFamily(
    name="prism",
    order=60,
    validate=validate,
    documents=("prb_tasks.documents.prism", "prb_tasks.documents.fewshot"),
    options="prb_tasks.documents.prism:PrismOptions",
    task_folders=("prism", "fewshot"),
    commands=frozenset({"download", "validate", "audit", "train"}),
    detect=looks_like,
    detect_order=15,
    hub_repo=HF_REPO,
    hub_files=(SURVEY, CONVERSATIONS, UTTERANCES, METADATA, "README.md"),
    whole="PRISM is one release of four files",
    audit="prb_tasks.documents.prism:audit_docs",
    train="fewshot",
    fewshot="prb_tasks.documents.prism:fewshot_source",
    describe="a PRISM folder (survey.jsonl, conversations.jsonl)",
    pairwise_example="prism_scalar",
    users_have="PRISM's participants have demographics and a profile (a self-description and their own system prompt)",
)

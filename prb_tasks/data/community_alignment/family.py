"""Community Alignment as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from prb_tasks.data.community_alignment.constants import FILES, HF_REPO
from prb_tasks.data.counts import read_copy
from prb_tasks.data.families import BenchmarkFamily

if TYPE_CHECKING:
    from prb_tasks.data.community_alignment.reader import CommunityCopy


def validate(folder: Path, bundled: bool = False) -> int:
    """Check a Community Alignment copy (each of its CSV files present: ``community_alignment.csv``,
    the first release's filtered and full files); print people and pairs.

    Args:
        folder: the copy's folder (``data/*.csv`` under it).
        bundled: unused (Community Alignment ships no sample).
    """
    from prb_tasks.data.people import summary_lines

    present = [split for split, name in FILES.items() if os.path.lexists(folder / name)] or ["auto"]
    for split in present:
        copy, code = read_copy(folder, partial(_read_split, split=split))
        if copy is None:
            return code
        print(f"{copy.path}: ok")
        print(f"  conversations: {copy.conversations}")
        for line in summary_lines(copy.people, copy.skipped, copy.first_bad):
            print(f"  {line}")
    return 0


def _read_split(folder: Path, split: str) -> CommunityCopy:
    from prb_tasks.data.community_alignment.reader import data_file, read_community

    return read_community(data_file(folder, split))


def looks_like(path: Path) -> bool:
    """A Community Alignment copy: one of its CSV files (``community_alignment.csv``, ``data/*.csv``)."""
    return any(os.path.lexists(path / name) and not (path / name).is_dir() for name in FILES.values())


FAMILY = BenchmarkFamily(
    name="community_alignment",
    order=70,
    validate=validate,
    documents=("prb_tasks.documents.community_alignment", "prb_tasks.documents.fewshot"),
    options="prb_tasks.documents.community_alignment:CommunityOptions",
    task_folders=("community_alignment", "fewshot"),
    commands=frozenset({"download", "validate", "audit", "train"}),
    detect=looks_like,
    detect_order=16,
    hub_repo=HF_REPO,
    hub_files=(*FILES.values(), "README.md"),
    whole="Community Alignment is downloaded whole (its CSV files)",
    audit="prb_tasks.documents.community_alignment:audit_docs",
    train="fewshot",
    fewshot="prb_tasks.documents.community_alignment:fewshot_source",
    describe="a Community Alignment folder (community_alignment.csv)",
    pairwise_example="community_alignment_scalar",
    users_have="Community Alignment's annotators have demographics (age, gender, education, politics, ethnicity, "
               "country) and no profile text",
)

"""RewardBench 2 as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prb_tasks.data.counts import print_checked, row_problems
from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.data.rewardbench2.schema import SUBSETS
from prb_tasks.data.rewardbench2.sources import DATA_FOLDER, EXPECTED_ROWS, HF_REPO, HF_SPLIT, read_folder


def validate(folder: Path, bundled: bool = False) -> int:
    """Check a local copy (``<dir>/data/test-*.parquet``); print rows per subset.

    Args:
        folder: the copy's folder.
        bundled: unused (RewardBench 2 ships no sample).
    """
    def read(path: Path) -> tuple[Counter[str], list[str]]:
        rows = read_folder(path)
        return Counter(row.subset for row in rows), row_problems(
            path, ((r.index, r.subset, r.id) for r in rows), "subset", SUBSETS.__contains__, ", ".join(SUBSETS))

    return print_checked(folder, "RewardBench 2 subset", EXPECTED_ROWS, read)


FAMILY = BenchmarkFamily(
    name="rewardbench2",
    order=40,
    validate=validate,
    documents=("prb_tasks.documents.rewardbench2",),
    options="prb_tasks.documents.rewardbench2:RewardBench2Options",
    task_folders=("rewardbench2",),
    commands=frozenset({"download", "validate"}),
    # No layout test: a copy looks like PersonalLLM's, so it is named with --family.
    hub_repo=HF_REPO,
    hub_files=(f"{DATA_FOLDER}/{HF_SPLIT}-*", "README.md"),
    whole="rewardbench2 is downloaded whole",
)

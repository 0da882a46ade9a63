"""PersonalLLM as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prb_tasks.data.counts import print_table, read_copy
from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.data.personalllm.constants import DATA_FOLDER, HF_REPO, HF_SPLIT, TRAIN_SPLIT


def validate(folder: Path, bundled: bool = False) -> int:
    """Check a PersonalLLM copy (``<dir>/data/test-*.parquet``); print counts per prompt subset.

    Args:
        folder: the copy's root folder.
        bundled: unused (PersonalLLM ships no sample).
    """
    from prb_tasks.data.personalllm.constants import EXPECTED_TEST_ROWS
    from prb_tasks.data.personalllm.reader import read_split

    rows, code = read_copy(folder, read_split)
    if rows is None:
        return code
    incomplete = [row for row in rows if row.missing_scores]
    print_table("PersonalLLM prompt subset", Counter(row.subset for row in rows), EXPECTED_TEST_ROWS,
                published="the published test split")
    if incomplete:
        first = incomplete[0]
        print(f"{len(incomplete)} prompts have a missing reward and will not be used "
              f"(first: row {first.index + 1}, column {first.missing_scores[0]})")
    return 0


def looks_like(path: Path) -> bool:
    """A PersonalLLM copy: ``<dir>/data/`` and no Personalized RewardBench subset folder."""
    from prb_tasks.data.personalized_rb.subsets import SUBSETS

    return (path / "data").is_dir() and not any((path / s.config).is_dir() for s in SUBSETS)


FAMILY = BenchmarkFamily(
    name="personalllm",
    order=20,
    validate=validate,
    documents=("prb_tasks.documents.personalllm", "prb_tasks.documents.fewshot"),
    options="prb_tasks.documents.personalllm:PersonalLLMOptions",
    task_folders=("personalllm", "fewshot"),
    commands=frozenset({"download", "validate", "audit", "train"}),
    detect=looks_like,
    detect_order=30,
    # Its test split, and the train split the authors' public-script preset draws histories from.
    hub_repo=HF_REPO,
    hub_files=(f"{DATA_FOLDER}/{HF_SPLIT}-*", f"{DATA_FOLDER}/{TRAIN_SPLIT}-*", "README.md"),
    whole="PersonalLLM has one test split",
    audit="prb_tasks.documents.personalllm:audit_docs",
    describe="a PersonalLLM folder (<dir>/data/test-*.parquet)",
    downstream_tasks=("personalllm_bon",),
    pairwise_example="personalllm_scalar",
    train="prb_tasks.train.sources:personalllm",
    fewshot="prb_tasks.documents.fewshot:personalllm_data",
    users_have="PersonalLLM's users are simulated: they have no demographics and no profile text",
)

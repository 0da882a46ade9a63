"""PersonalRewardBench as a registered benchmark family (:mod:`prb_tasks.data.families`)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.data.personal_reward_bench.constants import FAMILY_NAME, HALF_NAMES, HALVES

if TYPE_CHECKING:
    from prb_tasks.data.personal_reward_bench.reader import HalfCopy


def validate(folder: Path, bundled: bool = False) -> int:
    """Check a PersonalRewardBench copy (each half present under ``folder``); print users and pairs.

    Args:
        folder: the copy's top folder (``<hub name>/data/`` per half).
        bundled: unused (no sample ships).
    """
    from prb_tasks.data.counts import read_copy
    from prb_tasks.data.personal_reward_bench.reader import present_halves, too_deep

    deep = too_deep(folder)
    if deep:
        print(deep)
        return 1
    halves = present_halves(folder) if folder.is_dir() else []
    if folder.is_dir() and not halves:
        names = " or ".join(f"{name}/data/" for _, name in HALVES.values())
        print(f"prb: {folder} has no {names}; give the folder holding the downloaded halves")
        return 1
    for half in halves or ["arena"]:
        copy, code = read_copy(folder, partial(_read, half=half))
        if copy is None:
            return code
        users = copy.users
        print(f"{copy.folder}: ok ({HALF_NAMES[half]} half)")
        print(f"  users: {len(users)}; pairs: train {sum(len(u.train) for u in users)}, "
              f"val {sum(len(u.val) for u in users)}, test {sum(len(u.test) for u in users)}")
        print(f"  users without train pairs (judged with no history): {sum(not u.train for u in users)}; "
              f"without test pairs: {sum(not u.test for u in users)}")
        print(f"  users with a test pair and fewer than 6 train pairs: "
              f"{sum(bool(u.test) and len(u.train) < 6 for u in users)}")
        for why, n in sorted(copy.skipped.items()):
            print(f"  rows left out: {n} {why}")
    return 0


def _read(folder: Path, half: str) -> HalfCopy:
    from prb_tasks.data.personal_reward_bench.reader import read_half

    return read_half(folder, half)


def looks_like(path: Path) -> bool:
    """A PersonalRewardBench copy: a folder holding ``<hub name>/data/`` of either half, or (given by
    mistake, and then named as such by :func:`validate`) a half's own folder or its ``data/``."""
    from prb_tasks.data.personal_reward_bench.reader import inside_half

    return any((path / name / "data").is_dir() for _, name in HALVES.values()) or inside_half(path) is not None


FAMILY = BenchmarkFamily(
    name=FAMILY_NAME,
    order=80,
    validate=validate,
    documents=("prb_tasks.documents.personal_reward_bench", "prb_tasks.documents.fewshot"),
    options="prb_tasks.documents.personal_reward_bench:PersonalRewardBenchOptions",
    task_folders=("personal_reward_bench", "fewshot"),
    commands=frozenset({"download", "validate", "train"}),
    detect=looks_like,
    detect_order=14,
    hub_repo=HALVES["arena"][0],
    hub_files=("data/*", "README.md"),
    hub_parts=tuple(HALVES.values()),
    whole="PersonalRewardBench is downloaded whole (both halves, each into its hub name's folder)",
    train="fewshot",
    fewshot="prb_tasks.documents.personal_reward_bench:fewshot_source",
    describe="a PersonalRewardBench folder (chatbot_arena_personalized_0125/, prism_personalized_0125/)",
    pairwise_example="personal_reward_bench_arena_scalar",
    users_have="PersonalRewardBench's users have their labelled pairs only (no demographics, no profile text)",
)

"""Which benchmark family a local path holds, from its layout alone (nothing is read)."""

from __future__ import annotations

from pathlib import Path

from prb_tasks.data.personalized_rb.subsets import SUBSETS


def detect_family(path: Path) -> str:
    """Guess what ``path`` holds: ``custom`` (a preference file), ``rmbench`` (a
    ``total_dataset.json``), ``personalllm`` (a PersonalLLM copy: ``<dir>/data/`` and no
    subset folders) or ``personalized_rb``.

    Args:
        path: a file or folder given by the user (need not exist).
    """
    if path.is_file() and path.suffix in (".json", ".jsonl"):
        return "custom"
    if (path / "total_dataset.json").is_file() or (path / "data" / "total_dataset.json").is_file():
        return "rmbench"  # the authors' RM-Bench file; a RewardBench 2 copy looks like PersonalLLM's: --family
    if (path / "data").is_dir() and not any((path / s.config).is_dir() for s in SUBSETS):
        return "personalllm"
    return "personalized_rb"

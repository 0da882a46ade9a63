"""Which benchmark family a local path holds, from its layout alone (nothing is read)."""

from __future__ import annotations

from pathlib import Path

from prb_tasks.data import families


def detect_family(path: Path) -> str:
    """Guess what ``path`` holds, asking each registered family's layout test in turn:
    ``custom`` (a preference file), ``rmbench`` (a ``total_dataset.json``), ``personalllm``
    (``<dir>/data/`` and no subset folders), else ``personalized_rb``. A RewardBench 2 copy
    looks like PersonalLLM's: it is named with ``--family``.

    Args:
        path: a file or folder given by the user (need not exist).
    """
    return families.detect(path)

"""Where PersonalRewardBench is read from: ``--metadata '{"data_dir": DIR}'``, else
``PRB_PERSONAL_REWARD_BENCH_DIR``; DIR holds one or both halves (``<hub name>/data/``)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from prb_tasks.data.errors import DataError
from prb_tasks.data.families import download_command
from prb_tasks.data.local import data_dir_usage, local_folder
from prb_tasks.data.personal_reward_bench.constants import ENV_VAR, FAMILY_NAME
from prb_tasks.data.personal_reward_bench.reader import HalfCopy, half_folder, read_half
from prb_tasks.data.rawfiles import folder_stamp


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    """The local copy to read.

    Args:
        data_dir: the ``data_dir`` option; None falls back to ``PRB_PERSONAL_REWARD_BENCH_DIR``.

    Raises:
        DataError: neither names a folder (one line saying how to make and give one).
    """
    folder = local_folder(data_dir, ENV_VAR)
    if folder is None:
        # The same advice as PRISM's and Community Alignment's: prb's own command fetches both halves into
        # their folders (a bare `hf download` needs one call per half and the right --local-dir).
        raise DataError(f"prb: the PersonalRewardBench tasks read a local copy: run "
                        f"`{download_command(FAMILY_NAME)}` (both halves), then pass "
                        f"{data_dir_usage()} or set {ENV_VAR}")
    return folder


def load_half(data_dir: str | os.PathLike[str] | None, half: str) -> HalfCopy:
    """One half of the copy (read once per run and state of its files).

    Args:
        data_dir: see :func:`resolve_data_dir`.
        half: ``arena`` or ``prism``.
    """
    root = resolve_data_dir(data_dir)
    folder = half_folder(root, half)
    return _read(root, half, folder_stamp(folder / "data"))


@lru_cache(maxsize=4)
def _read(root: Path, half: str, _stamp: tuple[float, ...]) -> HalfCopy:
    # The judge, scalar and official tasks of one run read the same half once.
    return read_half(root, half)

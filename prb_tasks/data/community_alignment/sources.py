"""Where Community Alignment is read from: ``--metadata '{"data_dir": DIR}'``, else
``PRB_COMMUNITY_ALIGNMENT_DIR``; ``split`` picks the CSV file (``auto``: the newest present)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from prb_tasks.data.community_alignment.constants import ENV_VAR
from prb_tasks.data.community_alignment.reader import CommunityCopy, data_file, read_community
from prb_tasks.data.errors import DataError
from prb_tasks.data.local import data_dir_usage, local_folder


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    """The local copy to read.

    Args:
        data_dir: the ``data_dir`` option; None falls back to ``PRB_COMMUNITY_ALIGNMENT_DIR``.

    Raises:
        DataError: neither names a folder (one line saying how to make and give one).
    """
    folder = local_folder(data_dir, ENV_VAR)
    if folder is None:
        raise DataError("prb: the Community Alignment tasks read a local copy: run `prb data download DIR --family "
                        f"community_alignment`, then pass {data_dir_usage()} or set {ENV_VAR}")
    return folder


def load_copy(data_dir: str | os.PathLike[str] | None, split: str) -> CommunityCopy:
    """What the copy's ``split`` file holds (read once per run and file state).

    Args:
        data_dir: see :func:`resolve_data_dir`.
        split: ``auto``, ``latest``, ``filtered`` or ``full`` (:func:`~.reader.data_file`).
    """
    path = data_file(resolve_data_dir(data_dir), split)
    return _read(path, path.stat().st_mtime)


@lru_cache(maxsize=2)
def _read(path: Path, _mtime: float) -> CommunityCopy:
    # The judge and scalar tasks of one run read the same file once.
    return read_community(path)

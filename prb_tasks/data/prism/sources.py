"""Where PRISM is read from: ``--metadata '{"data_dir": DIR}'``, else ``PRB_PRISM_DIR``.

There is no hub fallback at evaluation time: the copy is a few hundred MB of JSON Lines that
``prb data download DIR --family prism`` fetches once.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from prb_tasks.data.errors import DataError
from prb_tasks.data.local import data_dir_usage, local_folder
from prb_tasks.data.prism.constants import ENV_VAR
from prb_tasks.data.prism.protocol import PRESETS, PrismProtocol
from prb_tasks.data.prism.reader import PrismCopy, read_prism
from prb_tasks.data.rawfiles import folder_stamp


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path:
    """The local copy to read.

    Args:
        data_dir: the ``data_dir`` option; None falls back to ``PRB_PRISM_DIR``.

    Raises:
        DataError: neither names a folder (one line saying how to make and give one).
    """
    folder = local_folder(data_dir, ENV_VAR)
    if folder is None:
        raise DataError(f"prb: the PRISM tasks read a local copy: run `prb data download DIR --family prism`, then "
                        f"pass {data_dir_usage()} or set {ENV_VAR}")
    return folder


def load_copy(data_dir: str | os.PathLike[str] | None,
              protocol: PrismProtocol = PRESETS["prb"]) -> tuple[Path, PrismCopy]:
    """The folder and what it holds (read once per run, folder state and protocol).

    Args:
        data_dir: see :func:`resolve_data_dir`.
        protocol: which pairs to build (default: prb's).
    """
    folder = resolve_data_dir(data_dir)
    return folder, _read(folder, folder_stamp(folder), protocol)


@lru_cache(maxsize=2)
def _read(folder: Path, _stamp: tuple[float, ...], protocol: PrismProtocol) -> PrismCopy:
    # The judge and scalar tasks of one run read the same copy once.
    return read_prism(folder, protocol)

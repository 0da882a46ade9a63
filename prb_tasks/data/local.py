"""Which local copy of a benchmark to read: ``--metadata data_dir``, else an environment variable.

Shared by the families that can read either a local folder in the HF layout or the hub;
None means "no local copy was asked for: use the hub".
"""

from __future__ import annotations

import os
from pathlib import Path

from prb_tasks.data.errors import DataError


def chosen_location(data_dir: str | os.PathLike[str] | None, env_var: str) -> str | os.PathLike[str] | None:
    """``data_dir`` if given, else the value of ``env_var``, else None."""
    return data_dir if data_dir not in (None, "") else os.environ.get(env_var) or None


def local_folder(data_dir: str | os.PathLike[str] | None, env_var: str) -> Path | None:
    """The local folder to read (resolved), or None to use the hub.

    Args:
        data_dir: value from ``--metadata``; empty falls back to ``env_var``.
        env_var: the family's environment variable for a local copy.

    Raises:
        DataError: the folder named does not exist (the message names where it came from).
    """
    chosen = chosen_location(data_dir, env_var)
    if chosen is None:
        return None
    path = Path(chosen).expanduser()
    if not path.is_dir():
        where = "data_dir" if data_dir not in (None, "") else env_var
        raise DataError(f"prb: {where} points to '{path}', which is not a folder; give the folder of a local "
                        f"copy in the HF layout (`prb data download` makes one), or drop {where} to read the hub")
    return path.resolve()

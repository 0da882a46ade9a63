"""Which local copy of a benchmark to read: ``--metadata data_dir``, else an environment variable.

Shared by the families that can read either a local folder in the HF layout or the hub;
None means "no local copy was asked for: use the hub".
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prb_tasks.data.errors import DataError

# How the command in use takes the local copy: the option's name (for "drop it") and how to
# give it (for "pass ..."). prb eval and the data commands read it from --metadata; a
# command with a flag of its own (prb rl's --data-dir) says so with data_dir_option().
_OPTION: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "prb_data_dir_option", default=("data_dir", "--metadata '{\"data_dir\": \"DIR\"}'"))


@contextmanager
def data_dir_option(name: str, usage: str) -> Iterator[None]:
    """Within the block, messages about the local copy name this command's own option.

    Args:
        name: the option as a message names it, e.g. ``--data-dir``.
        usage: how to give it, e.g. ``--data-dir DIR``.
    """
    token = _OPTION.set((name, usage))
    try:
        yield
    finally:
        _OPTION.reset(token)


def data_dir_usage() -> str:
    """How the command in use takes a local copy's folder (``--metadata '{"data_dir": "DIR"}'``
    unless a command said otherwise with :func:`data_dir_option`)."""
    return _OPTION.get()[1]


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
        where = _OPTION.get()[0] if data_dir not in (None, "") else env_var
        raise DataError(f"prb: {where} points to '{path}', which is not a folder; give the folder of a local "
                        f"copy in the HF layout (`prb data download` makes one), or drop {where} to read the hub")
    return path.resolve()

"""Folders and files that only their owner can read, for everything prb keeps on disk.

prb's caches hold what was judged and scored (prompts, users' profiles, collected
participants' reasons and demographics when their answers are judged), and its result
folders hold the same in their samples. The system's default permissions (umask 022)
would make them readable by every account on a shared machine, so each cache and results
folder prb creates is made ``0700`` and the files prb writes in a cache ``0600``, as the
collected answers and their link keys already are (:mod:`prb_tasks.collect.store`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

#: Owner only: read, write and enter (folders); read and write (files).
FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(folder: Path | str) -> Path:
    """Create ``folder`` (and missing parents) readable by its owner only; tighten it if it exists.

    A folder that already existed is made owner-only too when this account owns it (an older
    prb made its caches world-readable); one owned by another account is left as it is.
    Parents that already existed are never changed (``~/.cache`` is the user's own business).

    Args:
        folder: the folder to create or tighten.

    Returns:
        The folder, as a ``Path``.

    Raises:
        OSError: the folder cannot be created.
    """
    path = Path(folder)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for part in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it first: tightened below
            part.mkdir(mode=FOLDER_MODE)
        _tighten(part, FOLDER_MODE)  # mkdir's mode passes through the umask; chmod does not
    if path not in missing:
        _tighten(path, FOLDER_MODE)
    return path


def private_files(folder: Path | str) -> None:
    """Make every file directly in ``folder`` owner-only (a cache's database, its journal files).

    Args:
        folder: a folder prb owns, e.g. a cache folder after diskcache opened it.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            _tighten(Path(entry.path), FILE_MODE)


def _tighten(path: Path, mode: int) -> None:
    """chmod ``path`` to ``mode`` when this account owns it and it is looser; never raises."""
    try:
        info = path.stat()
        if info.st_uid == os.getuid() and info.st_mode & 0o777 & ~mode:
            os.chmod(path, mode)
    except OSError:
        pass  # a read-only file system or a race with a remover: the folder's own mode still holds


@contextlib.contextmanager
def owner_only_writes() -> Iterator[None]:
    """Inside the block, every file and folder this process creates is owner-only (umask 077).

    The ``prb`` commands and prb's runs under plain ``lm_eval`` run inside it, so what lm-eval
    writes for them (results, samples), prb's reports, models and usage files are private too,
    not only the caches; the caller's umask is put back afterwards.
    """
    before = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(before)

"""Folders that appear only when whole, and the digests that vouch for their files.

``prb train`` and ``prb rl`` write model folders of many files (weights, tokenizer, config,
optimizer state). Written in place, a kill -9 halfway leaves a folder that looks finished:
a new backbone beside an old head, a checkpoint without its optimizer state. Here a folder
is written under a temporary sibling name, flushed to disk (every file and folder fsync'd)
and only then renamed to its real name; a folder it replaces is swapped out in one step
where the system allows it (Linux ``renameat2(RENAME_EXCHANGE)``), else moved aside first
and put back by :func:`recover` when the kill came between the two renames.

The sha256 digests (:func:`digests`, :func:`check_digests`) are recorded in a manifest when
the folder is written and compared when it is read, so a file changed or damaged later is
found before a model is evaluated with it.

:func:`crash_point` is the kill -9 tests' hook: the child process kills itself at the point
``$PRB_CRASH_AT`` names (a no-op otherwise).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import signal
from collections.abc import Iterable
from pathlib import Path

#: The environment variable naming the point at which :func:`crash_point` kills the process.
CRASH_ENV = "PRB_CRASH_AT"
_RENAME_EXCHANGE = 2  # linux/fs.h


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL when ``$PRB_CRASH_AT`` equals ``name`` (tests' hook).

    Args:
        name: the point in a save, e.g. ``train:between-files``.
    """
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (new or renamed files) to disk.

    Args:
        folder: the folder.
    """
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(folder: Path) -> None:
    """Flush every file under ``folder``, then every folder bottom-up, to disk.

    Args:
        folder: the folder.
    """
    for root, dirs, files in os.walk(folder, topdown=False):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(root))


def staging(target: Path) -> Path:
    """The temporary sibling a folder is written under before it becomes ``target``.

    Args:
        target: the folder's real name.
    """
    return target.with_name(f".{target.name}.partial")


def aside(target: Path) -> Path:
    """Where the folder ``target`` replaces waits while the new one is renamed in (no exchange).

    Args:
        target: the folder's real name.
    """
    return target.with_name(f".{target.name}.previous")


def fresh_staging(target: Path) -> Path:
    """An empty :func:`staging` folder for ``target`` (what a killed save left there is removed).

    Args:
        target: the folder's real name.
    """
    staged = staging(target)
    if staged.exists():
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    return staged


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: libc's on Linux
        renameat2 = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return False
    at_fdcwd = -100
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def publish(staged: Path, target: Path, crash: str = "publish") -> None:
    """Make the finished folder ``staged`` the folder ``target``, replacing it as a whole.

    Args:
        staged: the folder written (usually :func:`staging` of ``target``).
        target: its real name; an existing folder there is replaced.
        crash: the name of this save for :func:`crash_point` (``<crash>:before-rename``,
            ``<crash>:between-renames``).
    """
    fsync_tree(staged)
    crash_point(f"{crash}:before-rename")
    if target.exists():
        if _exchange(staged, target):
            fsync_dir(target.parent)
            shutil.rmtree(staged)  # now the old folder
            return
        old = aside(target)
        if old.exists():
            shutil.rmtree(old)
        os.rename(target, old)
        crash_point(f"{crash}:between-renames")
        os.rename(staged, target)
        fsync_dir(target.parent)
        shutil.rmtree(old)
        return
    os.rename(staged, target)
    fsync_dir(target.parent)


def recover(target: Path) -> bool:
    """Put back the folder a save moved aside when it was killed between its two renames.

    Args:
        target: the folder's real name.

    Returns:
        True when a folder was put back.
    """
    old = aside(target)
    if not target.exists() and old.is_dir():
        os.rename(old, target)
        return True
    return False


def digest(path: Path) -> str:
    """The sha256 of a file's bytes, in hex.

    Args:
        path: the file.
    """
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files(folder: Path, parts: Iterable[str]) -> list[str]:
    found: list[str] = []
    for part in parts:
        path = folder / part
        if path.is_dir():
            found += [p.relative_to(folder).as_posix() for p in sorted(path.rglob("*")) if p.is_file()]
        elif path.is_file():
            found.append(part)
    return found


def digests(folder: Path, parts: Iterable[str]) -> dict[str, str]:
    """Relative path -> sha256 of every file in ``parts`` of ``folder`` (files, or folders taken whole).

    Args:
        folder: the folder.
        parts: its files and subfolders to vouch for (``backbone``, ``head.safetensors``).
    """
    return {name: digest(folder / name) for name in _files(folder, parts)}


def check_digests(folder: Path, recorded: dict[str, str], parts: Iterable[str]) -> str | None:
    """What is wrong with ``folder``'s files against ``recorded`` (None: every file matches).

    Args:
        folder: the folder.
        recorded: relative path -> sha256, as :func:`digests` gave when it was written.
        parts: the files and subfolders the digests vouch for; a file found there that
            ``recorded`` does not list is wrong too (a loader could read it).
    """
    for name, expected in recorded.items():
        path = folder / name
        if not path.is_file():
            return f"{path} is missing"
        if digest(path) != expected:
            return f"{path} is not the file written with it (its sha256 differs)"
    extra = [name for name in _files(folder, parts) if name not in recorded]
    if extra:
        return f"{folder / extra[0]} was not written with it"
    return None

"""Read rows out of ``.jsonl`` and ``.parquet`` files, with one-line errors.

Every benchmark family stores its rows in one of these two formats; the family's own
reader validates what comes out of here.
"""

from __future__ import annotations

import errno
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.common.textfiles import json_lines_at
from prb_tasks.data.errors import DataError


class UnreadableParquet(DataError):
    """A ``.parquet`` file pyarrow cannot open (cut short, damaged, or not parquet); one line.

    A family whose files come from the hub catches it to add the command that fetches the file again.

    Attributes:
        path: the file.
        reason: pyarrow's words, on one line and without the path it repeats.
    """

    def __init__(self, path: Path, exc: Exception) -> None:
        self.path = path
        self.reason = " ".join(str(exc).split()).replace(f" '{path}'", "").rstrip(".")
        super().__init__(f"prb: cannot read parquet file {path}: {self.reason}")


def unreadable_file(path: Path, exc: OSError, what: str = "data file") -> DataError:
    """The one-line error for a file that cannot be opened (a folder, a link loop, no permission).

    Args:
        path: the file.
        exc: what opening (or stat-ing) it raised.
        what: what the file is for the user.
    """
    if isinstance(exc, IsADirectoryError) or path.is_dir():
        return DataError(f"prb: {what} {path} is a folder, not a file; put the file there or remove the folder")
    if exc.errno == errno.ELOOP:
        return DataError(f"prb: {what} {path} is a symbolic link that leads back to itself (a link loop); "
                         "replace it with the file or a link to it")
    return DataError(f"prb: cannot read {what} {path}: {exc.strerror or exc}")


#: Larger than any benchmark's data file by two orders of magnitude: a file this big is a mistake
#: (a disk image, a link to the wrong place), and reading it would exhaust memory first.
MAX_DATA_FILE_BYTES = 16 * 1024**3

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_file(path: Path, what: str = "data file", limit: int | None = None) -> None:
    """Raise a one-line error unless ``path`` is a regular file of sane size that can be opened.

    A named pipe would block the open (and the run) until something writes to it, and a
    link to ``/dev/zero`` would be read for ever; both are refused before any read.

    Args:
        path: the file.
        what: what the file is for the user (``data file``, ``scores file``).
        limit: the largest size in bytes such a file may sensibly have (default
            :data:`MAX_DATA_FILE_BYTES`).
    """
    limit = MAX_DATA_FILE_BYTES if limit is None else limit
    try:
        info = path.stat()  # follows links; never blocks, unlike opening a FIFO
    except OSError as exc:
        raise unreadable_file(path, exc, what) from None
    if stat.S_ISDIR(info.st_mode):
        raise unreadable_file(path, IsADirectoryError(errno.EISDIR, "Is a directory"), what)
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        target = f" (a link to {path.resolve()})" if path.is_symlink() else ""
        raise DataError(f"prb: {what} {path} is {kind}{target}, not a regular file; put the {what} itself there")
    if info.st_size > limit:
        raise DataError(f"prb: {what} {path} is {_size(info.st_size)}, more than any {what} should be "
                        f"(limit {_size(limit)}); check that it is the right file")
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise unreadable_file(path, exc, what) from None


def _size(n: int) -> str:
    """``16 GiB``, ``64 MiB`` or ``1 KiB``: whole units, the largest that fits."""
    unit = next((u for u in (3, 2, 1) if n >= 1024**u), 0)
    return f"{n / 1024**unit:.0f} {('B', 'KiB', 'MiB', 'GiB')[unit]}"


def folder_stamp(folder: Path) -> tuple[float, ...]:
    """Modification times of the entries of ``folder`` (empty if it is not one): a cache key.

    An entry that cannot be stat-ed (a link loop) counts as -1; reading it then gives the
    one-line error.
    """
    if not folder.is_dir():
        return ()

    def mtime(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return -1.0

    return tuple(mtime(p) for p in sorted(folder.iterdir()))


def raw_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of one ``.parquet`` or ``.jsonl`` file as dicts, in file order.

    Args:
        path: the file; its suffix picks the format.
    """
    # pyarrow would read a folder as a dataset of its own files, and both formats would
    # fail on a link loop with a bare OSError.
    check_file(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several unrelated types
            raise UnreadableParquet(path, exc) from exc
        yield from table.to_pylist()
        return
    for _, value in jsonl_rows_at(path):
        yield value


def jsonl_rows_at(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The rows of one ``.jsonl`` file as (byte offset where the row's line starts, dict),
    in file order: a reader can keep the offsets and read a row again later.

    Args:
        path: the file.
    """
    check_file(path)
    for lineno, offset, value in json_lines_at(path, "data file", "fix or remove the line", DataError):
        if not isinstance(value, dict):
            raise DataError(f"prb: {path} line {lineno}: expected a JSON object, got {type(value).__name__}")
        yield offset, value


def describe_error(exc: ValidationError) -> str:
    """The first problem of a pydantic error, as ``field 'a.b.0': message``."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "row"
    return f"field '{where}': {first['msg']}"


def shard_files(folder: Path, split: str, expected: str = "") -> list[Path]:
    """The ``<split>-*.parquet`` (or ``.jsonl``) shards in ``folder``, in shard order.

    Args:
        folder: where a split's files sit in an HF-layout copy.
        split: the split name (``test``).
        expected: layout hint appended to the "no file" error, e.g. ``(expected <dir>/data/...)``.
    """
    parquet = sorted(folder.glob(f"{split}-*.parquet"))
    jsonl = sorted(folder.glob(f"{split}-*.jsonl"))
    if parquet and jsonl:
        raise DataError(f"prb: {folder} holds both .parquet and .jsonl files for the {split} split; keep one format")
    if not (parquet or jsonl):
        raise DataError(f"prb: no {split}-*.parquet or {split}-*.jsonl file in {folder}{expected}")
    return parquet or jsonl

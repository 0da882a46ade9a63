"""Read rows out of ``.jsonl`` and ``.parquet`` files, with one-line errors.

Every benchmark family stores its rows in one of these two formats; the family's own
reader validates what comes out of here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.data.errors import DataError
from prb_tasks.textfiles import utf8_lines


def raw_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of one ``.parquet`` or ``.jsonl`` file as dicts, in file order.

    Args:
        path: the file; its suffix picks the format.
    """
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several unrelated types
            raise DataError(f"prb: cannot read parquet file {path}: {exc}") from exc
        yield from table.to_pylist()
        return
    with path.open("rb") as handle:
        for lineno, line in enumerate(utf8_lines(handle, path, "data file", DataError), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"prb: {path} line {lineno}, column {exc.colno}: not valid JSON ({exc.msg}); "
                    "fix or remove the line"
                ) from exc
            if not isinstance(value, dict):
                raise DataError(
                    f"prb: {path} line {lineno}: expected a JSON object, got {type(value).__name__}"
                )
            yield value


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

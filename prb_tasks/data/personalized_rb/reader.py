"""Read benchmark rows from files in the HF repo layout and validate them.

A local copy of the benchmark is ``<dir>/<config>/test-00000-of-00001.parquet``
(or ``.jsonl``). Every row is validated; the first structurally bad row (a field
missing or of the wrong type) stops the run with one line that names the file, the
row and the field. Odd but usable rows are kept (see ``checks.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.schema import PRBRow
from prb_tasks.data.personalized_rb.subsets import HF_SPLIT, Subset
from prb_tasks.data.rawfiles import describe_error, raw_rows, shard_files


def split_files(data_dir: Path, subset: Subset) -> list[Path]:
    """The files holding ``subset``'s test split under ``data_dir``, in shard order.

    Args:
        data_dir: root of a local copy in the HF repo layout.
        subset: which config to look for.
    """
    folder = data_dir / subset.config
    if not folder.is_dir():
        raise DataError(
            f"prb: no folder '{folder}' for subset {subset.config}; expected the HF layout "
            f"<dir>/{subset.config}/{HF_SPLIT}-00000-of-00001.parquet "
            "(run `prb data download DIR` on a machine with internet access)"
        )
    return shard_files(folder, HF_SPLIT)


def validate_rows(raw: Iterable[dict[str, Any]], origin: str) -> list[PRBRow]:
    """Validate raw dict rows; raise DataError naming ``origin``, row number and id.

    Rows are numbered from 1, like lines (in a ``.jsonl`` file without blank lines,
    row N is line N).

    Args:
        raw: rows as dicts, in dataset order.
        origin: file path or dataset name used in error messages.
    """
    rows = list(validated_rows(raw, origin))
    if not rows:
        raise DataError(f"prb: {origin} holds no rows")
    return rows


def validated_rows(raw: Iterable[dict[str, Any]], origin: str) -> Iterator[PRBRow]:
    """Each raw row validated, one at a time (a caller that keeps only part of each row
    never holds every profile); the errors of :func:`validate_rows`, which says an empty
    input is one.

    Args:
        raw: rows as dicts, in dataset order.
        origin: file path or dataset name used in error messages.
    """
    for index, item in enumerate(raw, start=1):
        try:
            yield PRBRow.model_validate(item)
        except ValidationError as exc:
            row_id = item.get("id") if isinstance(item, dict) else None
            raise DataError(
                f"prb: bad row in {origin}, row {index} (id {row_id!r}): {describe_error(exc)}; "
                "fix the row or re-download the data"
            ) from None


def read_subset(data_dir: Path, subset: Subset) -> list[PRBRow]:
    """Read and validate one subset from a local folder in the HF layout, in dataset order."""
    rows: list[PRBRow] = []
    for path in split_files(data_dir, subset):
        rows.extend(validate_rows(raw_rows(path), str(path)))
    return rows

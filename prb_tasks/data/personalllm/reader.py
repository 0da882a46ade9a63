"""Read a PersonalLLM split from files in the HF layout and validate every row.

A local copy is ``<dir>/data/test-00000-of-00001.parquet`` (``.jsonl`` accepted too),
as on the hub; the train split, which only the authors' presets read, sits next to it
as ``<dir>/data/train-00000-of-00001.parquet``. The first bad row stops the run with one line naming the file, the
row and the column.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalllm.constants import DATA_FOLDER, HF_SPLIT
from prb_tasks.data.personalllm.schema import PromptRow, to_prompt_row, wide_model
from prb_tasks.data.rawfiles import describe_error, raw_rows, shard_files


def split_files(data_dir: Path, split: str = HF_SPLIT) -> list[Path]:
    """The files of one split under ``data_dir``, in shard order.

    Args:
        data_dir: root of a local copy in the HF layout.
        split: ``test`` (every task) or ``train`` (the authors' public-script preset).
    """
    folder = data_dir / DATA_FOLDER
    layout = f"<dir>/{DATA_FOLDER}/{split}-00000-of-00001.parquet"
    if not folder.is_dir():
        raise DataError(
            f"prb: no folder '{folder}'; a PersonalLLM copy has the HF layout {layout} "
            "(run `prb data download DIR --family personalllm` on a machine with internet access)"
        )
    return shard_files(folder, split, f" (expected {layout})")


def validate_rows(raw: Iterable[dict[str, Any]], origin: str, start: int = 0) -> list[PromptRow]:
    """Validate wide rows; raise DataError naming ``origin``, the row and the column.

    Rows are numbered from 1 in messages, like lines of a ``.jsonl`` file.

    Args:
        raw: rows as dicts, in dataset order.
        origin: file path or dataset name used in error messages.
        start: index of the first row within the whole split (for sharded copies).
    """
    model = wide_model()
    rows: list[PromptRow] = []
    for offset, item in enumerate(raw):
        try:
            validated = model.model_validate(item)
        except ValidationError as exc:
            row_id = item.get("prompt_id") if isinstance(item, dict) else None
            raise DataError(
                f"prb: bad row in {origin}, row {offset + 1} (prompt_id {row_id!r}): {describe_error(exc)}; "
                "fix the row or re-download the data"
            ) from None
        rows.append(to_prompt_row(validated, start + offset))
    return rows


def read_split(data_dir: Path, split: str = HF_SPLIT) -> list[PromptRow]:
    """Read and validate one split (default ``test``) from a local folder in the HF layout."""
    rows: list[PromptRow] = []
    for path in split_files(data_dir, split):
        rows.extend(validate_rows(raw_rows(path), str(path), start=len(rows)))
    if not rows:
        raise DataError(f"prb: the PersonalLLM copy in {data_dir} holds no rows")
    return rows


def usable(rows: list[PromptRow], origin: str, quiet: bool = False) -> list[PromptRow]:
    """The rows whose 80 rewards are all numbers; the others are left out, and said so.

    Args:
        rows: validated rows.
        origin: where they came from, for the notice.
        quiet: do not print the notice (callers that report it themselves).
    """
    kept = [row for row in rows if not row.missing_scores]
    dropped = [row for row in rows if row.missing_scores]
    if dropped and not quiet:
        first = dropped[0]
        print(
            f"prb: PersonalLLM ({origin}): {len(dropped)} of {len(rows)} prompts have a missing reward "
            f"and are not used (first: row {first.index + 1}, prompt_id {first.prompt_id!r}, "
            f"column {first.missing_scores[0]})",
            file=sys.stderr,
        )
    if not kept:
        raise DataError(f"prb: PersonalLLM ({origin}): no prompt has all its rewards")
    return kept

"""Where RewardBench 2 rows come from: a local copy in the HF layout, or the hub.

Precedence: ``--metadata '{"data_dir": ...}'``, then ``PRB_REWARDBENCH2_DIR``, then the
hub (``allenai/reward-bench-2``, split ``test``: what allenai's ``run_v2.py`` loads).
A local copy has the hub's layout, ``<dir>/data/test-00000-of-00001.parquet``
(``.jsonl`` shards with the same columns are accepted too). The first bad row stops
the run with one line naming the file, the row and the field.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.data.errors import DataError
from prb_tasks.data.hub import load_from_hub, require_hub
from prb_tasks.data.local import local_folder
from prb_tasks.data.rawfiles import describe_error, folder_stamp, raw_rows, shard_files
from prb_tasks.data.rewardbench2.schema import Row, RowModel, row_label, to_row

HF_REPO = "allenai/reward-bench-2"
HF_SPLIT = "test"
DATA_FOLDER = "data"
ENV_VAR = "PRB_REWARDBENCH2_DIR"
#: Rows of the published test split (the dataset card's ``num_examples``).
EXPECTED_ROWS = 1865
LAYOUT = f"<dir>/{DATA_FOLDER}/{HF_SPLIT}-00000-of-00001.parquet"

_OFFLINE_ADVICE = (
    f"on an offline machine run `prb data download DIR --family rewardbench2` elsewhere and pass "
    f"--metadata '{{\"data_dir\": \"DIR\"}}' or set {ENV_VAR}"
)


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The local folder to read, or None for the hub.

    Args:
        data_dir: value from ``--metadata``; None falls back to ``PRB_REWARDBENCH2_DIR``.
    """
    return local_folder(data_dir, ENV_VAR)


def validate_rows(raw: Iterable[dict[str, Any]], origin: str, start: int = 0) -> list[Row]:
    """Validate rows; raise one DataError line naming ``origin``, the row and the field.

    Args:
        raw: rows as dicts, in dataset order.
        origin: file path or dataset name used in messages.
        start: index of the first row within the split (for sharded copies).
    """
    rows: list[Row] = []
    for offset, item in enumerate(raw):
        try:
            model = RowModel.model_validate(item)
        except ValidationError as exc:
            raise DataError(f"prb: bad row in {origin}, row {start + offset + 1}{row_label(item)}: "
                            f"{describe_error(exc)}; fix the row or download the data again") from None
        rows.append(to_row(model, start + offset))
    return rows


def read_folder(folder: Path) -> list[Row]:
    """Every row of the test split of a local copy, in shard order.

    Args:
        folder: root of a copy in the HF layout.
    """
    data = folder / DATA_FOLDER
    if not data.is_dir():
        raise DataError(f"prb: no folder '{data}'; a RewardBench 2 copy has the HF layout {LAYOUT}")
    rows: list[Row] = []
    for path in shard_files(data, HF_SPLIT, f" (expected {LAYOUT})"):
        rows.extend(validate_rows(raw_rows(path), str(path), start=len(rows)))
    if not rows:
        raise DataError(f"prb: the RewardBench 2 copy in {folder} holds no rows")
    return rows


def load_rows(data_dir: str | os.PathLike[str] | None = None) -> list[Row]:
    """Validated rows of the test split, in dataset order.

    Args:
        data_dir: local copy (see :func:`resolve_data_dir`).
    """
    folder = resolve_data_dir(data_dir)
    if folder is None:
        return _from_hub()
    return _from_folder(folder, folder_stamp(folder / DATA_FOLDER))


@lru_cache(maxsize=4)
def _from_folder(folder: Path, _stamp: tuple[float, ...]) -> list[Row]:
    # The six subset tasks of a run read the same files once; the stamp keeps the cache
    # honest if a file is rewritten in between.
    return read_folder(folder)


@lru_cache(maxsize=1)
def _from_hub() -> list[Row]:
    require_hub(f"{HF_REPO} ({HF_SPLIT})", _OFFLINE_ADVICE)
    table = load_from_hub(HF_REPO, HF_SPLIT, _OFFLINE_ADVICE, split=HF_SPLIT)
    return validate_rows(table, f"{HF_REPO}:{HF_SPLIT}")

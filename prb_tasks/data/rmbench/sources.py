"""Where RM-Bench rows come from: a local ``total_dataset.json``, or the hub.

Precedence: ``--metadata '{"data_dir": ...}'``, then ``PRB_RMBENCH_DIR``, then the hub
(``THU-KEG/RM-Bench``, split ``train``: the 1,327 evaluation rows; the dataset has no
other split). A local copy is the file the authors' scripts read, ``total_dataset.json``
(a JSON array), at the folder's top (as on the hub, whose dataset repository holds just
``total_dataset.json``, 11 MB, beside its README.md; ``datasets`` reads that one JSON file
as the split ``train``) or in its ``data/`` folder (as in the authors' GitHub repository,
which also has per-domain ``*_filtered.json`` files that prb does not read). The first
bad row stops the run with one line naming the file, the row and the field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.common.textfiles import too_deep
from prb_tasks.data.errors import DataError
from prb_tasks.data.hub import load_from_hub, require_hub
from prb_tasks.data.local import local_folder
from prb_tasks.data.rawfiles import check_file, describe_error
from prb_tasks.data.rmbench.schema import Row, RowModel, row_label, to_row

HF_REPO = "THU-KEG/RM-Bench"
HF_SPLIT = "train"
FILE_NAME = "total_dataset.json"
ENV_VAR = "PRB_RMBENCH_DIR"
EXPECTED_ROWS = 1327

_OFFLINE_ADVICE = (
    f"on an offline machine run `prb data download DIR --family rmbench` elsewhere (or copy {FILE_NAME} from the "
    "authors' GitHub data/ folder) and pass "
    f"--metadata '{{\"data_dir\": \"DIR\"}}' or set {ENV_VAR}"
)


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The local folder to read, or None for the hub."""
    return local_folder(data_dir, ENV_VAR)


def data_file(folder: Path) -> Path:
    """``total_dataset.json`` in ``folder`` or its ``data/`` folder."""
    for candidate in (folder / FILE_NAME, folder / "data" / FILE_NAME):
        if candidate.exists():
            return candidate
    raise DataError(f"prb: no {FILE_NAME} in {folder} or {folder / 'data'}; an RM-Bench copy is the authors' "
                    f"{FILE_NAME} (a JSON array of rows with id, prompt, chosen, rejected and domain)")


def validate_rows(raw: Iterable[Any], origin: str) -> list[Row]:
    """Validate rows; raise one DataError line naming ``origin``, the row and the field."""
    rows: list[Row] = []
    for offset, item in enumerate(raw):
        try:
            model = RowModel.model_validate(item)
        except ValidationError as exc:
            raise DataError(f"prb: bad row in {origin}, row {offset + 1}{row_label(item)}: {describe_error(exc)}; "
                            "fix the row or download the data again") from None
        rows.append(to_row(model, offset))
    return rows


def read_file(path: Path) -> list[Row]:
    """Every row of one ``total_dataset.json``."""
    check_file(path)
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"prb: {path} is not valid JSON ({exc}); download it again") from None
    except RecursionError:
        raise DataError(f"prb: {too_deep(str(path))}") from None
    except OSError as exc:
        raise DataError(f"prb: cannot read data file {path}: {exc.strerror or exc}") from None
    if not isinstance(data, list):
        raise DataError(f"prb: {path} holds a JSON {type(data).__name__}; RM-Bench's {FILE_NAME} is an array of rows")
    rows = validate_rows(data, str(path))
    if not rows:
        raise DataError(f"prb: {path} holds no rows")
    return rows


def load_rows(data_dir: str | os.PathLike[str] | None = None) -> list[Row]:
    """Validated rows in file order."""
    folder = resolve_data_dir(data_dir)
    if folder is None:
        return _from_hub()
    path = data_file(folder)
    return _from_file(path, path.stat().st_mtime)


@lru_cache(maxsize=4)
def _from_file(path: Path, _mtime: float) -> list[Row]:
    return read_file(path)


@lru_cache(maxsize=1)
def _from_hub() -> list[Row]:
    require_hub(f"{HF_REPO} ({HF_SPLIT})", _OFFLINE_ADVICE)
    table = load_from_hub(HF_REPO, HF_SPLIT, _OFFLINE_ADVICE, split=HF_SPLIT)
    return validate_rows(table, f"{HF_REPO}:{HF_SPLIT}")

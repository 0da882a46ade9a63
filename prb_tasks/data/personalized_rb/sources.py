"""Where rows come from: the bundled sample, a local folder, or the HF hub.

Precedence: an explicit ``data_dir`` (``--metadata '{"data_dir": ...}'``; the value
``sample`` means the bundled sample), then ``PRB_DATA_DIR``, then the HF hub.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from prb_tasks.common.resources import sample_dir
from prb_tasks.data.errors import DataError
from prb_tasks.data.hub import require_hub
from prb_tasks.data.local import chosen_location, data_dir_usage, local_folder
from prb_tasks.data.personalized_rb.checks import print_warnings
from prb_tasks.data.personalized_rb.columnar import SubsetTable, from_arrow, read_files
from prb_tasks.data.personalized_rb.reader import split_files
from prb_tasks.data.personalized_rb.schema import PRBRow
from prb_tasks.data.personalized_rb.subsets import HF_REPO, HF_SPLIT, Subset
from prb_tasks.data.rawfiles import folder_stamp

ENV_VAR = "PRB_DATA_DIR"
SAMPLE = "sample"


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The local folder to read, or None to use the HF hub.

    Args:
        data_dir: value from ``--metadata``; ``"sample"`` selects the bundled sample.
    """
    if str(chosen_location(data_dir, ENV_VAR)) == SAMPLE:
        return sample_dir()
    return local_folder(data_dir, ENV_VAR)


def load_rows(subset: Subset, data_dir: str | os.PathLike[str] | None = None) -> list[PRBRow]:
    """Validated rows of one subset, in dataset order.

    Args:
        subset: which HF config to load.
        data_dir: local copy (see :func:`resolve_data_dir`); None falls back to
            ``PRB_DATA_DIR`` and then to the HF hub.
    """
    return load_table(subset, data_dir).full_rows()


def load_table(subset: Subset, data_dir: str | os.PathLike[str] | None = None) -> SubsetTable:
    """One subset as checked Arrow columns (profiles decoded only when asked for).

    Args:
        subset: which HF config to load.
        data_dir: as in :func:`load_rows`.
    """
    folder = resolve_data_dir(data_dir)
    if folder is None:
        return _from_hub(subset)
    return _from_folder(folder, subset, _mtime_key(folder, subset))


def _mtime_key(folder: Path, subset: Subset) -> tuple[float, ...]:
    return folder_stamp(folder / subset.config)


@lru_cache(maxsize=16)
def _from_folder(folder: Path, subset: Subset, _stamp: tuple[float, ...]) -> SubsetTable:
    # Several variants in one run read the same files; the mtime stamp keeps the
    # cache honest if a file is rewritten in between. Being cached, the warnings
    # about odd rows are printed once per run, not once per task.
    table = read_files(split_files(folder, subset), str(folder / subset.config))
    print_warnings(table.rows, table.origin)
    return table


def _offline_advice() -> str:
    return (f"on an offline machine run `prb data download DIR` elsewhere and pass "
            f"{data_dir_usage()} or set {ENV_VAR}")


def check_hub(what: str = HF_REPO) -> None:
    """Fail at once, naming ``what``, when the hub is out of reach (see :func:`require_hub`)."""
    require_hub(what, _offline_advice())


@lru_cache(maxsize=4)
def _from_hub(subset: Subset) -> SubsetTable:
    check_hub(f"{HF_REPO} ({subset.config})")
    try:
        import datasets

        ds = datasets.load_dataset(HF_REPO, subset.config, split=HF_SPLIT)
    except Exception as exc:  # offline, auth, missing config: all end the same way
        raise DataError(
            f"prb: could not load {HF_REPO} ({subset.config}) from the HF hub: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}; "
            f"{_offline_advice()}"
        ) from exc
    origin = f"{HF_REPO}:{subset.config}"
    arrow = getattr(getattr(ds, "data", None), "table", None)
    if arrow is None:  # not an Arrow-backed dataset: check the rows one by one
        import pyarrow as pa

        arrow = pa.table({})
    table = from_arrow(arrow, lambda: ds, origin, getattr(ds, "_fingerprint", None))
    print_warnings(table.rows, origin)
    return table

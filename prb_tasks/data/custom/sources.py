"""Where bring-your-own data comes from: ``--metadata '{"data_path": FILE}'`` or the
bundled example (``data_path: example``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from prb_tasks.data.custom.reader import read_users
from prb_tasks.data.custom.schema import UserRecord
from prb_tasks.data.errors import DataError

EXAMPLE = "example"


def example_path() -> Path:
    """The example file shipped with the package."""
    return Path(__file__).resolve().parent / "example.jsonl"


def resolve_path(data_path: str | None) -> Path:
    """The file to read.

    Args:
        data_path: a file path, or ``example`` for the bundled example.
    """
    if data_path in (None, ""):
        raise DataError(
            "prb: this task needs your preference file: --metadata '{\"data_path\": \"FILE.jsonl\"}' "
            "(or \"example\" for the bundled example)"
        )
    if str(data_path) == EXAMPLE:
        return example_path()
    path = Path(str(data_path)).expanduser()
    if not path.is_file():
        raise DataError(f"prb: data_path '{path}' is not a file")
    return path.resolve()


def load_users(data_path: str | None) -> tuple[Path, list[UserRecord]]:
    """The resolved file and its validated users.

    Args:
        data_path: see :func:`resolve_path`.
    """
    path = resolve_path(data_path)
    return path, _read(path, path.stat().st_mtime)


@lru_cache(maxsize=4)
def _read(path: Path, _mtime: float) -> list[UserRecord]:
    # The judge and scalar tasks of one run read the same file once.
    return read_users(path)

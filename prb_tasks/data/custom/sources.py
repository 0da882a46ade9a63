"""Where bring-your-own data comes from: ``--metadata '{"data_path": FILE}'`` or the
bundled example (``data_path: example``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from prb_tasks.data.custom.reader import iter_users
from prb_tasks.data.custom.schema import UserRecord
from prb_tasks.data.errors import DataError

EXAMPLE = "example"


def example_path() -> Path:
    """The example file shipped with the package."""
    return Path(__file__).resolve().parent / "example.jsonl"


def missing_path_line(data_dir: object = None) -> str:
    """The one line for a custom-data run without ``data_path``.

    Args:
        data_dir: the run's ``data_dir``, if one was given (another family's key, a
            common slip for this one).
    """
    given = (f"data_dir ({data_dir}) names the folder of a benchmark's copy (PRISM, Personalized RewardBench, "
             "PersonalLLM, ...), not a file of yours; "
             if data_dir not in (None, "") else "")
    return (f"prb: personalized_custom tasks read your preference file from the metadata key data_path; {given}"
            "pass --metadata '{\"data_path\": \"FILE.jsonl\"}' (or \"example\" for the bundled example)")


def resolve_path(data_path: str | None, data_dir: object = None) -> Path:
    """The file to read.

    Args:
        data_path: a file path, or ``example`` for the bundled example.
        data_dir: the run's ``data_dir``, only to name it when ``data_path`` is missing.
    """
    if data_path in (None, ""):
        raise DataError(missing_path_line(data_dir))
    if str(data_path) == EXAMPLE:
        return example_path()
    path = Path(str(data_path)).expanduser()
    if not path.is_file():
        raise DataError(f"prb: data_path '{path}' is not a file")
    return path.resolve()


def stream_users(data_path: str | None, data_dir: object = None) -> tuple[Path, Iterator[UserRecord]]:
    """The resolved file and its validated users one at a time, read afresh on each call: what a
    caller has finished with can be freed, so nothing of the file outlives its use.

    Args:
        data_path: see :func:`resolve_path`.
        data_dir: see :func:`resolve_path`.
    """
    path = resolve_path(data_path, data_dir)
    return path, iter_users(path)

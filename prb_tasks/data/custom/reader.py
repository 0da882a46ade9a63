"""Read a bring-your-own preference file (``.json`` array or ``.jsonl``) and validate it.

Every problem stops the run with one line naming the file, the user, the preference
(``preferences[i]``, counted from 0 as in the file) and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.common.jsonarray import NotAnArray, array_items
from prb_tasks.common.textfiles import read_text, too_deep, unreadable_number
from prb_tasks.data.custom.schema import UserRecord
from prb_tasks.data.errors import DataError
from prb_tasks.data.rawfiles import check_file, raw_rows

SUFFIXES = (".json", ".jsonl")


def _objects(path: Path) -> Iterable[Any]:
    if path.suffix == ".jsonl":
        return raw_rows(path)
    check_file(path)  # a regular file of sane size: never a FIFO (blocks) or /dev/zero (endless)
    return _array(path)


def _array(path: Path) -> Iterator[Any]:
    """A ``.json`` file's users one at a time, parsed as they are reached: only one user's
    object and a chunk of the text are held, not the whole file and every user at once."""
    handed = 0
    try:
        for item in array_items(path):
            handed += 1
            yield item
    except NotAnArray:
        # Parsed whole to name the problem in one line (or, had the stream stopped short of
        # a file json.loads accepts, to hand out the rest).
        yield from _parse_whole(path)[handed:]
    except OSError as exc:
        raise DataError(f"prb: cannot read data file {path}: {exc.strerror or exc}") from None


def _parse_whole(path: Path) -> list[Any]:
    """Parse the whole file, raising the one line that says what is wrong with it."""
    text = read_text(path, "data file", DataError)  # not UTF-8: one line, as the .jsonl reader says it
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = " (one object per line? name the file .jsonl)" if exc.msg == "Extra data" else ""
        raise DataError(
            f"prb: {path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}){hint}"
        ) from None
    except RecursionError:
        raise DataError(f"prb: {too_deep(str(path))}") from None
    except ValueError as exc:
        raise DataError(f"prb: {path} {unreadable_number(exc)}; fix the file") from None
    if not isinstance(value, list):
        raise DataError(
            f"prb: {path}: expected a JSON array of user objects, got {type(value).__name__} "
            "(or write one user object per line in a .jsonl file)"
        )
    return value


def _problem(path: Path, entry: int, item: Any, exc: ValidationError) -> DataError:
    first = exc.errors()[0]
    loc = list(first["loc"])
    user = item.get("user_id") if isinstance(item, dict) else None
    who = f"user {user!r} (entry {entry})" if user is not None else f"entry {entry}"
    if len(loc) >= 2 and loc[0] == "preferences" and isinstance(loc[1], int):
        field = ".".join(str(p) for p in loc[2:]) or "preference"
        return DataError(
            f"prb: bad preference in {path}, {who}, preferences[{loc[1]}]: field '{field}': "
            f"{first['msg']}; fix the file"
        )
    field = ".".join(str(p) for p in loc) or "user"
    return DataError(f"prb: bad user in {path}, {who}: field '{field}': {first['msg']}; fix the file")


def iter_users(path: Path) -> Iterator[UserRecord]:
    """Validated users of one file, in file order (entries counted from 1), one at a time.

    A ``.jsonl`` file is read line by line and keeps nothing of a user once the next one is
    asked for (only the ids seen, to name a repeated one), so a caller that builds what it
    needs from each user holds one user's preferences and profile at a time. A ``.json``
    array is read the same way, a chunk of text at a time, each user parsed as it is reached.

    Args:
        path: a ``.json`` file holding an array of user objects, or a ``.jsonl``
            file with one user object per line.
    """
    if path.suffix not in SUFFIXES:
        raise DataError(f"prb: {path}: expected a .json or .jsonl file of users")
    seen: dict[str, int] = {}
    for entry, item in enumerate(_objects(path), start=1):
        if not isinstance(item, dict):
            raise DataError(f"prb: bad user in {path}, entry {entry}: expected an object, got {type(item).__name__}")
        try:
            user = UserRecord.model_validate(item)
        except ValidationError as exc:
            raise _problem(path, entry, item, exc) from None
        del item
        uid = str(user.user_id)
        if uid in seen:
            raise DataError(
                f"prb: bad user in {path}, entry {entry}: user_id {uid!r} repeats entry {seen[uid]}; "
                "put all of a user's preferences in one object"
            )
        seen[uid] = entry
        yield user
    if not seen:
        raise DataError(f"prb: {path} holds no users")


def read_users(path: Path) -> list[UserRecord]:
    """Every validated user of one file, in file order (see :func:`iter_users`).

    Args:
        path: a ``.json`` or ``.jsonl`` file of users.
    """
    return list(iter_users(path))

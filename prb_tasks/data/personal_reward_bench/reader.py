"""Read a local copy of PersonalRewardBench (one or both halves, each in the hub layout).

A copy of a half is the hub repository as ``hf download`` writes it:
``<half folder>/data/<hub split>-NNNNN-of-NNNNN.parquet`` (``.jsonl`` shards are read too). Like the
authors' loaders, every hub split is read and concatenated (``train``, ``validation``, ``test``, then the
others by name), and each user's rows are taken by the ``split`` column (``train`` / ``val`` / ``test``);
rows of another ``split`` value are counted and left out. Users come in the order of their ids (by value
where the copy stores them as numbers: pandas' ``groupby`` order in the authors' code), each user's rows
in the concatenated order; a pair with an empty answer is kept, as their code keeps it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prb_tasks.data.errors import DataError
from prb_tasks.data.families import download_command
from prb_tasks.data.people import Choice, Person, validated
from prb_tasks.data.personal_reward_bench.constants import (
    FAMILY_NAME,
    HALF_NAMES,
    HALVES,
    HUB_SPLIT_ORDER,
    USER_SPLITS,
)
from prb_tasks.data.personal_reward_bench.schema import BenchRowModel, TurnRow
from prb_tasks.data.rawfiles import UnreadableParquet, raw_rows

_SHARD = re.compile(r"(?P<split>.+?)-(?P<index>\d{5})-of-(?P<count>\d{5})\.(?P<ext>parquet|jsonl)")


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation."""

    role: str
    content: str


@dataclass(frozen=True)
class BenchRow:
    """One labelled pair of one user.

    Attributes:
        key: unique within the half (``arena:<user>/<row>``).
        user_id: the data's user id.
        split: ``train``, ``val`` or ``test``.
        context: the conversation before the two responses.
        chosen: the preferred response, as turns.
        rejected: the other response, as turns.
        chosen_as_turn: the row stored ``chosen`` and ``rejected`` as one turn each (not a list),
            the form P-GenRM's script reads (``chosen["content"]``).
        flip: the row's ``flip`` column (None where absent).
        conversation_id: the row's conversation id ("" where absent).
        where: the file and row, for messages.
    """

    key: str
    user_id: str
    split: str
    context: tuple[Turn, ...]
    chosen: tuple[Turn, ...]
    rejected: tuple[Turn, ...]
    chosen_as_turn: bool
    flip: bool | None
    conversation_id: str
    where: str

    @property
    def request(self) -> str:
        """The context as prb shows it: the last message, after the conversation so far when there was one."""
        return format_context(self.context)

    @property
    def chosen_text(self) -> str:
        """The preferred response as text."""
        return format_response(self.chosen)

    @property
    def rejected_text(self) -> str:
        """The other response as text."""
        return format_response(self.rejected)


@dataclass(frozen=True)
class UserRows:
    """One user's pairs by split, each in the concatenated order."""

    user_id: str
    train: tuple[BenchRow, ...]
    val: tuple[BenchRow, ...]
    test: tuple[BenchRow, ...]


@dataclass(frozen=True)
class HalfCopy:
    """One half of a copy, as read.

    Attributes:
        half: ``arena`` or ``prism``.
        folder: the half's folder.
        files: the shards read, in concatenation order.
        users: every user with a pair, in the authors' order (ids sorted as stored: numbers by value).
        skipped: rows left out, by why.
    """

    half: str
    folder: Path
    files: tuple[Path, ...]
    users: tuple[UserRows, ...]
    skipped: Counter[str]

    @property
    def pairs(self) -> int:
        """Pairs of every split."""
        return sum(len(u.train) + len(u.val) + len(u.test) for u in self.users)


def format_context(turns: tuple[Turn, ...]) -> str:
    """A context as one request: the last turn, after the earlier ones when there are any.

    Args:
        turns: the conversation before the responses.
    """
    *earlier, last = turns
    if not earlier:
        return last.content
    lines = ["Conversation so far:", *(f"{_speaker(t.role)}: {t.content}" for t in earlier)]
    return "\n".join(lines) + f"\n\nThe {_speaker(last.role).lower()}'s next message:\n{last.content}"


def _speaker(role: str) -> str:
    return {"user": "User", "assistant": "Assistant", "model": "Assistant", "system": "System"}.get(role, role)


def format_response(turns: tuple[Turn, ...]) -> str:
    """A response as text: its one turn's content; several turns each under its speaker."""
    if len(turns) == 1:
        return turns[0].content
    return "\n\n".join(f"{_speaker(t.role)}: {t.content}" for t in turns)


def _turns(value: TurnRow | list[TurnRow] | str, role: str) -> tuple[Turn, ...]:
    if isinstance(value, str):
        return (Turn(role, value),)
    if isinstance(value, TurnRow):
        return (Turn(value.role, value.content),)
    return tuple(Turn(t.role, t.content) for t in value)


def inside_half(path: Path) -> tuple[str, Path] | None:
    """The half whose own folder (or its ``data/``) ``path`` is, with the copy's top folder above it; None
    when ``path`` is neither (the copy's top folder is what the tasks and ``prb data validate`` take).

    Args:
        path: a folder given by the user.
    """
    for half, (_, name) in HALVES.items():
        if path.name == name and (path / "data").is_dir():
            return half, path.parent
        if path.name == "data" and path.parent.name == name and path.is_dir():
            return half, path.parent.parent
    return None


def too_deep(path: Path) -> str | None:
    """The one-line error for a half's own folder given where the copy's top folder belongs; None otherwise.

    Args:
        path: a folder given by the user.
    """
    found = inside_half(path)
    if found is None:
        return None
    half, top = found
    return (f"prb: {path} is inside the {HALF_NAMES[half]} half of a PersonalRewardBench copy; give the folder above "
            f"it ({top}), which holds {HALVES[half][1]}/data/")


def half_folder(data_dir: Path, half: str) -> Path:
    """The folder of ``half`` in a copy: ``data_dir/<hub name>``.

    Args:
        data_dir: the copy's top folder (holding one or both halves).
        half: ``arena`` or ``prism``.
    """
    if half not in HALVES:
        raise DataError(f"prb: unknown PersonalRewardBench half '{half}'; expected one of {', '.join(HALVES)}")
    repo, name = HALVES[half]
    folder = data_dir / name
    if not (folder / "data").is_dir():
        deep = too_deep(data_dir)
        if deep:
            raise DataError(deep)
        others = [h for h in present_halves(data_dir) if h != half]
        instead = "".join(f"; or run only the {HALF_NAMES[h]} half's tasks (--tasks 'personal_reward_bench_{h}*')"
                          for h in others)
        raise DataError(f"prb: {data_dir} has no {name}/data/ folder ({HALF_NAMES[half]} half); download it with "
                        f"`hf download {repo} --repo-type dataset --local-dir {folder}`{instead}")
    return folder


def present_halves(data_dir: Path) -> list[str]:
    """The halves a copy holds (each ``<hub name>/data/``), in :data:`HALVES` order."""
    return [half for half, (_, name) in HALVES.items() if (data_dir / name / "data").is_dir()]


def shards(folder: Path) -> list[Path]:
    """A half's shards in the order they are concatenated (by hub split, then shard number).

    Args:
        folder: the half's folder (``data/`` under it).
    """
    found: dict[str, list[Path]] = {}
    for path in sorted((folder / "data").iterdir()):
        match = _SHARD.fullmatch(path.name)
        if match and path.is_file():
            found.setdefault(match["split"], []).append(path)
    if not found:
        raise DataError(f"prb: no <split>-NNNNN-of-NNNNN.parquet file in {folder / 'data'}; give the folder of a "
                        "copy in the HF layout")
    formats = {p.suffix for paths in found.values() for p in paths}
    if len(formats) > 1:
        raise DataError(f"prb: {folder / 'data'} holds both .parquet and .jsonl shards; keep one format")
    for split, paths in found.items():
        _check_complete(folder, split, paths)
    order = sorted(found, key=lambda s: (HUB_SPLIT_ORDER.index(s) if s in HUB_SPLIT_ORDER else len(HUB_SPLIT_ORDER),
                                         s))
    return [path for split in order for path in found[split]]


def fetch_again(folder: Path) -> str:
    """The command, in backquotes, that fetches a copy's missing files into the copy holding ``folder``.

    Args:
        folder: a half's folder (``<copy>/<hub name>``).
    """
    return f"`{download_command(FAMILY_NAME, folder.parent)}`"


def _check_complete(folder: Path, split: str, paths: list[Path]) -> None:
    # Each shard's name says how many there are: an interrupted download leaves some out, and reading
    # the rest would drop users and pairs silently.
    data = folder / "data"
    parts = [_SHARD.fullmatch(p.name) for p in paths]
    counts = {int(m["count"]) for m in parts if m}
    have = {int(m["index"]) for m in parts if m}
    ext = next((m["ext"] for m in parts if m), "parquet")
    if len(counts) > 1:
        raise DataError(f"prb: {data} holds {split} shards of {sorted(counts)} parts at once (two downloads mixed); "
                        f"delete the {split}-* files and run {fetch_again(folder)}")
    total = counts.pop()
    missing = [f"{split}-{i:05d}-of-{total:05d}.{ext}" for i in range(total) if i not in have]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise DataError(f"prb: {data} lacks {missing[0]}{more} ({len(have)} of {total} {split} shards present: the "
                        f"download stopped early); run {fetch_again(folder)} to fetch what is missing")


def _row(half: str, raw: dict[str, Any], path: Path, number: int, position: int) -> BenchRow:
    user = raw.get("user_id")
    where = f"row {number}" + (f" (user {user!r})" if isinstance(user, (str, int)) else "")
    model: BenchRowModel = validated(BenchRowModel, raw, path, where)
    context = _turns(model.context, "user")
    chosen, rejected = _turns(model.chosen, "assistant"), _turns(model.rejected, "assistant")
    return BenchRow(key=f"{half}:{model.user_id}/{position}", user_id=model.user_id, split=model.split or "",
                    context=context, chosen=chosen, rejected=rejected,
                    chosen_as_turn=isinstance(model.chosen, TurnRow) and isinstance(model.rejected, TurnRow),
                    flip=model.flip, conversation_id=model.conversation_id or "", where=f"{path} {where}")


def _shard_rows(path: Path, folder: Path) -> Iterator[dict[str, Any]]:
    # A shard cut short or damaged (a copy interrupted, a full disk) is named with the way to fetch it
    # again: deleted first, because the hub client keeps a file it once fetched whole.
    try:
        yield from raw_rows(path)
    except UnreadableParquet as exc:
        raise DataError(f"{exc}; delete it and run {fetch_again(folder)} to fetch it again") from None


def read_half(data_dir: Path, half: str) -> HalfCopy:
    """Read and validate one half of a copy.

    Args:
        data_dir: the copy's top folder.
        half: ``arena`` or ``prism``.

    Raises:
        DataError: a missing folder or shard, or a bad row (one line naming the file, row and field).
    """
    folder = half_folder(data_dir, half)
    files = shards(folder)
    skipped: Counter[str] = Counter()
    by_user: dict[str, dict[str, list[BenchRow]]] = {}
    position = 0
    numeric_ids = True
    for path in files:
        for number, raw in enumerate(_shard_rows(path, folder), start=1):
            row = _row(half, raw, path, number, position)
            position += 1
            # The authors' pandas groupby sorts ids as stored: numbers by value, text as text.
            numeric_ids = numeric_ids and isinstance(raw.get("user_id"), int)
            if row.split not in USER_SPLITS:
                skipped[f"with split {row.split or None!r} (the authors' loaders keep train, val, test)"] += 1
                continue
            # An empty answer stays a pair, as in the authors' code (their denominators hold it).
            by_user.setdefault(row.user_id, {s: [] for s in USER_SPLITS})[row.split].append(row)
    if not by_user:
        raise DataError(f"prb: {folder} holds no row with split train, val or test")
    order = sorted(by_user, key=int) if numeric_ids else sorted(by_user)
    users = tuple(UserRows(uid, *(tuple(by_user[uid][s]) for s in USER_SPLITS)) for uid in order)
    return HalfCopy(half, folder, tuple(files), users, skipped)


def as_people(copy: HalfCopy) -> tuple[Person, ...]:
    """A half's users as prb's people (for the few-shot tasks and ``prb train``): every pair, train, val
    then test, each its own conversation; ids carry the half (``arena:<user>``).

    Args:
        copy: the half read.
    """
    people = []
    for user in copy.users:
        choices = tuple(Choice(key=row.key, group=row.key, interaction=row.key, prompt=row.request,
                               chosen=row.chosen_text, rejected=row.rejected_text,
                               chosen_first=bool(row.flip)) for row in (*user.train, *user.val, *user.test))
        people.append(Person(f"{copy.half}:{user.user_id}", {}, (), "", choices))
    return tuple(people)

"""A participant's append-only journal: one JSON line per event, fsync'd before the
server answers, so a crash, a closed tab or ``kill -9`` loses nothing acknowledged.

Events: ``{"event": "profile", "fields": {...}}`` and ``{"event": "answer", "pair":
ID, "left": "response_A" | "response_B", "choice": "response_A" | "response_B" |
"none", "reason": ..., "tags": [...]}``. Changing an answer appends a new event; on
replay the last event per pair wins.

An append is atomic at the line level: the whole line is written (a short write is
continued) and fsync'd, or the file is cut back to where it ended, so a full disk never
leaves half a line behind. A torn last line that a crash left anyway (the participant
never saw it accepted) is ignored by :func:`replay` and cut off by :func:`heal` (at the
server's start and before each append, so the next answer never lands after half a
line); what was cut is kept in ``<name>.torn`` beside the journal. Anything else
unreadable stops with one line.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prb_tasks.common.atomic import fsync_dir
from prb_tasks.common.errors import PRBError

NO_PREFERENCE = "none"
CHOICES = ("response_A", "response_B", NO_PREFERENCE)


class JournalError(PRBError):
    """A journal line that is not a torn last write."""


@dataclass(frozen=True)
class Answer:
    """A participant's latest answer to one pair.

    Attributes:
        pair_id: the pair.
        left: which answer of the file was shown on the left (the other on the right).
        choice: ``response_A``, ``response_B`` (as the file names them) or ``none``.
        reason: the free-text reason.
        tags: the value tags ticked.
        at: when it was given (seconds since the epoch).
    """

    pair_id: str
    left: str
    choice: str
    reason: str
    tags: tuple[str, ...]
    at: float


@dataclass
class ParticipantState:
    """What a participant's journal says so far."""

    profile: dict[str, str] | None = None
    answers: dict[str, Answer] = field(default_factory=dict)
    last_at: float | None = None
    torn_tail: bool = False


def append_event(path: Path, event: dict[str, Any]) -> None:
    """Append one whole line and force it to disk before returning; on any failure
    (a full disk, an I/O error) the file is cut back to where it ended and the error raised.

    Callers serialise appends to one journal (the server holds a lock per participant).

    Args:
        path: the participant's journal file (created on the first event).
        event: a JSON-serialisable event; ``at`` is added.
    """
    data = (json.dumps({**event, "at": round(time.time(), 3)}, ensure_ascii=False) + "\n").encode("utf-8")
    heal(path)
    new = not path.exists()
    _append_whole(path, data)
    if new:  # the file's directory entry must survive a crash too
        fsync_dir(path.parent)


def _append_whole(path: Path, data: bytes) -> None:
    """Append ``data`` whole and fsync it, or leave ``path`` as long as it was and raise."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(data):  # a short write (a nearly full disk) is continued, never left
                written += os.write(fd, data[written:])
            os.fsync(fd)
        except BaseException:
            # Half a line must never stay: the next append would land after it and both be damaged.
            try:
                os.ftruncate(fd, start)
                os.fsync(fd)
            except OSError:
                pass  # cutting back failed too: heal() cuts the torn tail before the next append
            raise
    finally:
        os.close(fd)


def torn_copy(path: Path) -> Path:
    """Where :func:`heal` keeps what it cut off ``path`` (``ana.jsonl`` -> ``ana.torn``)."""
    return path.with_suffix(".torn")


def heal(path: Path) -> bytes:
    """Cut a torn last line (bytes after the last newline) off a journal; what was cut is
    appended to :func:`torn_copy` first (fsync'd), so nothing is thrown away.

    Returns the bytes cut (empty when the journal ends cleanly or does not exist).

    Args:
        path: the participant's journal file.
    """
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return b""
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return b""
        # Read back from the end until a newline: a torn line is at most one event long.
        end, step, tail = size, 65536, b""
        while end > 0:
            begin = max(0, end - step)
            chunk = os.pread(fd, end - begin, begin)
            cut_at = chunk.rfind(b"\n")
            if cut_at >= 0:
                tail = chunk[cut_at + 1:] + tail
                end = begin + cut_at + 1
                break
            tail = chunk + tail
            end = begin
        if not tail:
            return b""
        _append_whole(torn_copy(path), tail + b"\n")  # no room for the copy: nothing is cut
        os.ftruncate(fd, end)
        os.fsync(fd)
        return tail
    finally:
        os.close(fd)


def _answer(event: dict[str, Any]) -> Answer:
    tags = event.get("tags", [])
    if (not isinstance(event.get("pair"), str) or event.get("left") not in CHOICES[:2]
            or event.get("choice") not in CHOICES or not isinstance(event.get("reason", ""), str)
            or not isinstance(tags, list) or not all(isinstance(t, str) for t in tags)):
        raise ValueError("not an answer event")
    return Answer(event["pair"], event["left"], event["choice"], event.get("reason", ""), tuple(tags),
                  float(event.get("at", 0)))


def replay(path: Path) -> ParticipantState:
    """The state a journal describes (empty when the file does not exist yet).

    Args:
        path: the participant's journal file.
    """
    state = ParticipantState()
    if not path.exists():
        return state
    lines = path.read_bytes().split(b"\n")
    # A file written by append_event ends with "\n"; anything after the last one is a torn write.
    complete, tail = lines[:-1], lines[-1]
    state.torn_tail = bool(tail.strip())
    for lineno, raw in enumerate(complete, start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw.decode("utf-8"))
            if not isinstance(event, dict):
                raise ValueError("not an object")
            if event.get("event") == "profile":
                fields = event.get("fields")
                if not isinstance(fields, dict) or not all(isinstance(v, str) for v in fields.values()):
                    raise ValueError("profile fields must be strings")
                state.profile = dict(fields)
            elif event.get("event") == "answer":
                answer = _answer(event)
                state.answers[answer.pair_id] = answer
            else:
                raise ValueError(f"unknown event {event.get('event')!r}")
            state.last_at = float(event.get("at", 0)) or state.last_at
        except (ValueError, UnicodeDecodeError) as exc:
            raise JournalError(f"prb collect: journal {path} line {lineno} is damaged ({exc}); "
                               "restore it from a backup or remove that line") from None
    return state

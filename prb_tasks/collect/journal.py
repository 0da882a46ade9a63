"""A participant's append-only journal: one JSON line per event, fsync'd before the
server answers, so a crash, a closed tab or ``kill -9`` loses nothing acknowledged.

Events: ``{"event": "profile", "fields": {...}}`` and ``{"event": "answer", "pair":
ID, "left": "response_A" | "response_B", "choice": "response_A" | "response_B" |
"none", "reason": ..., "tags": [...]}``. Changing an answer appends a new event; on
replay the last event per pair wins. A torn last line (the process died while writing
it, so the participant never saw it accepted) is ignored; anything else unreadable
stops with one line.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    """Append one event and force it to disk before returning.

    Args:
        path: the participant's journal file (created on the first event).
        event: a JSON-serialisable event; ``at`` is added.
    """
    line = json.dumps({**event, "at": round(time.time(), 3)}, ensure_ascii=False) + "\n"
    new = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    if new:  # the file's directory entry must survive a crash too
        fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a new or renamed file) to disk."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
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

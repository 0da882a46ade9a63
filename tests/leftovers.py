"""Processes a test session left running, read from ``/proc`` (no psutil needed).

A process counts as the session's when its parent is the pytest process, or when its
environment carries the session's token (set in ``os.environ`` when the session starts,
so every child inherits it): the second finds grandchildren whose parent died and that
now belong to init (e.g. a fake server started by a benchmark that a timeout killed).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

TOKEN_ENV = "PRB_TEST_SESSION"
PROC = Path("/proc")


@dataclass(frozen=True)
class Leftover:
    """A running process the session started.

    Attributes:
        pid: its process id.
        ppid: its parent's (1 or a subreaper when its own parent is gone).
        command: its command line, cut to 200 characters.
    """

    pid: int
    ppid: int
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} (parent {self.ppid}): {self.command}"


def _stat(pid: int) -> tuple[str, int] | None:
    """The state letter and parent pid of ``pid``, or None when it is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces or parentheses itself.
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def _carries(pid: int, token: str) -> bool:
    try:
        environ = (PROC / str(pid) / "environ").read_bytes()
    except OSError:  # another user's process, or gone
        return False
    return f"{TOKEN_ENV}={token}".encode() in environ.split(b"\0")


def _command(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()[:200] or "?"


def find(session_pid: int, token: str | None, ignore: frozenset[int] | set[int] = frozenset()) -> list[Leftover]:
    """The live (not zombie) processes that are ``session_pid``'s children or carry ``token``,
    except those in ``ignore`` (pytest-xdist's workers, when the controller looks)."""
    found = []
    me = os.getpid()
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) in (me, session_pid) or int(entry.name) in ignore:
            continue
        pid = int(entry.name)
        stat = _stat(pid)
        if stat is None or stat[0] in "ZX":
            continue
        if stat[1] == session_pid or (token and _carries(pid, token)):
            found.append(Leftover(pid, stat[1], _command(pid)))
    return found


def wait_then_kill(session_pid: int, token: str | None, grace: float = 5.0,
                   ignore: frozenset[int] | set[int] = frozenset()) -> list[Leftover]:
    """The session's processes still running after ``grace`` seconds (ones being shut down
    get that long to go), each then killed so none outlives the run; ``ignore`` names
    processes that are not leftovers (pytest-xdist's workers, seen from the controller)."""
    deadline = time.monotonic() + grace
    left = find(session_pid, token, ignore)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = find(session_pid, token, ignore)
    for leftover in left:
        try:
            os.kill(leftover.pid, signal.SIGKILL)
        except OSError:
            pass
    return left

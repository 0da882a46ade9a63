"""Wait for a test's subprocess with a progress-based watchdog, never a speed limit.

A wall-clock limit a slow machine can reach turns a loaded machine into a red test (issue 49:
the benchmark smoke run hit its own ``timeout=900`` at a load of 14-17 on 2 cores). A run
that still makes progress is never ended here: the watchdog ends a run only when it is
*stalled* (its process tree used no CPU and wrote no output for ``stall`` seconds: a
deadlock, a wait on a socket nobody answers) or when it passes ``ceiling`` seconds, a bound
far beyond any plausible run that only catches a run spinning forever.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

STALL_SECONDS = 600.0  # no CPU and no output for this long: hung, whatever the machine's load
CEILING_SECONDS = 4 * 3600.0  # the suite's own longest run takes minutes; this is a hang bound only
POLL_SECONDS = 2.0
HTTP_BOUND = 120.0  # seconds a test waits for one reply of a local server: a hang bound, not a speed limit


def _stat_fields(pid: int) -> list[str] | None:
    """The fields after the command name of ``/proc/PID/stat`` (None once the process is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_cpu_ticks(root: int) -> int:
    """CPU clock ticks (user + system) used so far by ``root`` and every process below it.

    Args:
        root: the pid whose process tree is summed (descendants found by their parent pid).
    """
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields is None or len(fields) < 15:
            continue
        # After the name: state ppid pgrp ... utime (index 11) stime (12) cutime (13) cstime (14).
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(value) for value in fields[11:15])
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def _size(data: Any) -> int:
    return len(data) if data else 0


def kill_tree(proc: subprocess.Popen) -> None:
    """Kill ``proc`` and, when it leads its own session, its whole process group; then reap it."""
    try:
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:  # already gone
        pass
    proc.communicate()


def communicate_watched(proc: subprocess.Popen, input: str | bytes | None = None,
                        stall: float = STALL_SECONDS, ceiling: float = CEILING_SECONDS,
                        poll: float = POLL_SECONDS) -> tuple[Any, Any]:
    """``proc.communicate()`` that ends ``proc`` (and its process group) only when it is hung.

    Raises ``subprocess.TimeoutExpired`` (after killing the run) when the run's process tree used
    no CPU and wrote no output for ``stall`` seconds, or ran ``ceiling`` seconds in all.

    Args:
        proc: a started process (start it with ``start_new_session=True`` so a kill takes what it
            started with it).
        input: text or bytes for its stdin (needs ``stdin=PIPE``).
        stall: seconds without any progress (CPU time or output) after which the run is hung.
        ceiling: seconds after which even a busy run is ended: far beyond any plausible run.
        poll: seconds between progress checks.
    """
    started = last_progress = time.monotonic()
    seen = (-1, -1, -1)
    while True:
        try:
            return proc.communicate(input=input, timeout=min(poll, stall))
        except subprocess.TimeoutExpired as waiting:
            input = None  # communicate() keeps feeding stdin itself after the first call
            now = time.monotonic()
            progress = (tree_cpu_ticks(proc.pid), _size(waiting.output), _size(waiting.stderr))
            if progress != seen:
                seen, last_progress = progress, now
            hung = now - last_progress >= stall
            if hung or now - started >= ceiling:
                kill_tree(proc)
                why = f"no CPU and no output for {stall:g} s" if hung else f"still running after {ceiling:g} s"
                raise subprocess.TimeoutExpired(proc.args, now - started,
                                                output=f"watchdog: {why}") from None
        except BaseException:
            kill_tree(proc)
            raise


def run_watched(args: Sequence[str], *, capture_output: bool = False, check: bool = False,
                input: str | bytes | None = None, stall: float = STALL_SECONDS,
                ceiling: float = CEILING_SECONDS, **popen: Any) -> subprocess.CompletedProcess:
    """``subprocess.run`` with the progress-based watchdog of ``communicate_watched`` instead of a
    wall-clock ``timeout``; the run gets its own session, so a kill takes everything it started.

    Args:
        args: the command.
        capture_output: pipe stdout and stderr (as ``subprocess.run``).
        check: raise ``CalledProcessError`` on a non-zero exit status.
        input: text or bytes for its stdin.
        stall: see ``communicate_watched``.
        ceiling: see ``communicate_watched``.
        **popen: further ``subprocess.Popen`` arguments (cwd, env, text, stdout, stderr...).
    """
    if capture_output:
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
    if input is not None:
        popen["stdin"] = subprocess.PIPE
    popen.setdefault("start_new_session", True)
    proc = subprocess.Popen(list(args), **popen)
    stdout, stderr = communicate_watched(proc, input=input, stall=stall, ceiling=ceiling)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done


def wait_for(condition: Callable[[], bool], proc: subprocess.Popen, what: str,
             stall: float = STALL_SECONDS, ceiling: float = CEILING_SECONDS, poll: float = 0.05) -> None:
    """Wait until ``condition()`` holds while ``proc`` works towards it; fail the test (with
    ``AssertionError``) when ``proc`` ended first or is hung (see ``communicate_watched``).

    Args:
        condition: what the test waits for (e.g. the fake server has answered 24 requests).
        proc: the run that brings it about.
        what: the condition in words, for the failure message.
        stall: seconds without CPU use by ``proc``'s tree after which it counts as hung.
        ceiling: seconds after which the wait fails even while ``proc`` is busy.
        poll: seconds between checks of ``condition``.
    """
    started = last_progress = last_check = time.monotonic()
    seen = -1
    while not condition():
        assert proc.poll() is None, f"the run ended (exit status {proc.returncode}) before {what}"
        now = time.monotonic()
        if now - last_check >= POLL_SECONDS:  # reading /proc is dearer than the condition
            last_check, ticks = now, tree_cpu_ticks(proc.pid)
            if ticks != seen:
                seen, last_progress = ticks, now
        assert now - last_progress < stall, f"the run used no CPU for {stall:g} s before {what}"
        assert now - started < ceiling, f"no {what} after {ceiling:g} s"
        time.sleep(poll)

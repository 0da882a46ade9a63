"""What every benchmark of the suite needs: timed child processes with their peak memory,
the fake judge server in its own process, spreads over repeats, and the machine.

Child processes, because start-up (imports, lm-eval's set-up) is part of what a user
waits for, and because a child's peak resident memory is exactly what ``wait4`` reports.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


@dataclass
class Run:
    """One finished child process.

    Attributes:
        command: what ran.
        started: epoch seconds when it was started (comparable with the server's times).
        wall: seconds from start to exit.
        peak_rss_mb: its largest resident memory, in MB.
        cpu: CPU seconds it used (user + system, its own children included).
        returncode: its exit status.
        stdout, stderr: its output.
    """

    command: list[str]
    started: float
    wall: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    cpu: float = 0.0

    def check(self) -> "Run":
        """Stop the suite with the child's last lines if it failed."""
        if self.returncode != 0:
            tail = "\n".join(self.stderr.strip().splitlines()[-15:])
            raise SystemExit(f"benchmark step failed (exit {self.returncode}): {' '.join(self.command)}\n{tail}")
        return self

    def line(self, prefix: str) -> dict[str, Any]:
        """The JSON printed after ``prefix`` on a line of stdout (the drivers' report)."""
        for text in reversed(self.stdout.splitlines()):
            if text.startswith(prefix):
                return json.loads(text[len(prefix):])
        raise SystemExit(f"no '{prefix}' line in the output of {' '.join(self.command)}")


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every child: this checkout first on the path, offline, no price download."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(extra or {})}


def die_with_parent() -> None:
    """In a child before it runs (``preexec_fn``): have Linux send it SIGKILL when this
    process ends, however it ends, so a benchmark killed by a timeout leaves no fake
    server or ``prb`` run behind. Elsewhere it does nothing."""
    if sys.platform != "linux":
        return
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1  # noqa: N806 - the name in <sys/prctl.h>
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def run(command: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 3600) -> Run:
    """Run ``command`` to the end; time it and read its peak memory from ``wait4``."""
    started = time.time()
    clock = time.perf_counter()
    proc = subprocess.Popen(list(command), env=child_env(env), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    output: dict[str, str] = {}
    readers = [threading.Thread(target=lambda name=name, stream=stream: output.__setitem__(name, stream.read()),
                                daemon=True)
               for name, stream in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(timeout)
    if any(reader.is_alive() for reader in readers):
        proc.kill()
        proc.wait()
        raise SystemExit(f"benchmark step timed out after {timeout:.0f} s: {' '.join(command)}")
    # Reap the child ourselves: wait4 reports its own peak resident memory.
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - clock
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(list(command), started, wall, usage.ru_maxrss / 1024, proc.returncode, output.get("out", ""),
               output.get("err", ""), usage.ru_utime + usage.ru_stime)


def python(*args: str) -> list[str]:
    """``python ARGS`` with this interpreter."""
    return [sys.executable, *args]


def add_judge_run_options(parser: argparse.ArgumentParser, copies: int, latency: float, concurrency: int) -> None:
    """The options of a benchmark that runs ``prb eval`` judges on copies of the sample.

    Args:
        parser: the benchmark's parser.
        copies, latency, concurrency: defaults of ``--copies``, ``--latency`` and ``--concurrency``.
    """
    parser.add_argument("--code", type=Path, default=ROOT, help="prb checkout to run (default: this one)")
    parser.add_argument("--copies", type=int, default=copies, help="copies of the sample (72 requests each)")
    parser.add_argument("--latency", type=float, default=latency, help="server latency per answer, seconds")
    parser.add_argument("--concurrency", type=int, default=concurrency, help="the judge's num_concurrent")
    parser.add_argument("--trials", type=int, default=3)


# --------------------------------------------------------------------------- fake server


def server_stats(url: str) -> dict[str, Any]:
    """The fake server's counters (``total_requests``, ``first_request_at``, ...)."""
    with urllib.request.urlopen(f"{url}/_stats", timeout=10) as reply:
        return json.loads(reply.read())


def server_reset(url: str) -> None:
    """Clear the fake server's counters."""
    request = urllib.request.Request(f"{url}/_reset", data=b"", method="POST")
    urllib.request.urlopen(request, timeout=10).close()


class Server:
    """The fake judge server in its own process (so it never competes for our GIL).

    Args:
        latency: seconds before each answer.
        faults: fault specs passed on as ``--fault`` (e.g. ``429=0.05``).
        retry_after: the ``Retry-After`` the server sends with injected 429s, seconds.
    """

    def __init__(self, latency: float = 0.0, faults: Sequence[str] = (), retry_after: float | None = None) -> None:
        extra = [arg for spec in faults for arg in ("--fault", spec)]
        if retry_after is not None:
            extra += ["--retry-after", str(retry_after)]
        self.proc = subprocess.Popen(
            python("-m", "prb_tasks.testing.fake_server", "--port", "0", "--latency", str(latency), *extra),
            env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            preexec_fn=die_with_parent,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("READY "):
            self.proc.kill()
            self.proc.wait()
            raise SystemExit(f"fake server did not start: {line!r}")
        self.url = line.split(" ", 1)[1]

    def stats(self) -> dict[str, Any]:
        """The server's counters (``total_requests``, ``first_request_at``, ...)."""
        return server_stats(self.url)

    def reset(self) -> None:
        """Clear the counters."""
        server_reset(self.url)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- numbers


@dataclass
class Spread:
    """Repeated measurements of one quantity."""

    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(value)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    def text(self, digits: int = 1, unit: str = "") -> str:
        """``median`` alone for one value, else ``median (min-max)``."""
        if not self.values:
            return "-"
        fmt = f"{{:.{digits}f}}"
        if len(self.values) == 1:
            return fmt.format(self.values[0]) + unit
        return (f"{fmt.format(self.median)}{unit} ({fmt.format(min(self.values))}-"
                f"{fmt.format(max(self.values))})")


def load() -> str:
    """The 1, 5 and 15 minute load averages, for the notes on each section."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def machine() -> dict[str, str]:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                cpu = text.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(next(t for t in Path("/proc/meminfo").read_text().splitlines() if t.startswith("MemTotal")).split()[1])
        memory = f"{kb / 1024 / 1024:.0f} GB"
    except (OSError, StopIteration, ValueError):
        pass
    versions = []
    for package in ("lm_eval", "litellm", "datasets", "pyarrow", "numpy", "pandas", "torch", "transformers",
                    "accelerate", "sentence-transformers"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            pass
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "cpu": f"{cpu}, {os.cpu_count()} logical CPUs",
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "packages": ", ".join(versions),
        "prb": (commit + (" (with uncommitted changes)" if dirty else "")) or "unknown",
    }

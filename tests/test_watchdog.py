"""The tests' subprocess watchdog ends hung runs only, never slow ones (tests/watchdog.py, issue 49)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runner import run_cli
from tests.watchdog import kill_tree, run_watched, tree_cpu_ticks, wait_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

# Each child below outlives its stall time by far, yet makes progress all along.
PRINTS = "import time\nfor i in range(12):\n    print(i, flush=True); time.sleep(0.5)\n"
SPINS = "import time\nend = time.process_time() + 3\nwhile time.process_time() < end:\n    pass\n"


def test_a_run_that_keeps_writing_is_not_ended_by_its_stall_time(tmp_path: Path):
    proc = run_cli([], cwd=tmp_path, stall=2, program=[sys.executable, "-c", PRINTS])
    assert proc.returncode == 0 and proc.stdout.split() == [str(i) for i in range(12)]


def test_a_run_that_keeps_computing_is_not_ended_by_its_stall_time():
    # 3 s of CPU without a line of output: on a loaded machine that is many seconds of wall time.
    proc = run_watched([sys.executable, "-c", SPINS], capture_output=True, text=True, stall=2)
    assert proc.returncode == 0, proc.stderr


def test_a_silent_idle_run_is_ended_with_what_it_started(tmp_path: Path):
    pid_file = tmp_path / "child.pid"
    with pytest.raises(subprocess.TimeoutExpired) as info:
        run_watched(["bash", "-c", f"sleep 300 & echo $! > {pid_file}; wait"], capture_output=True, stall=1)
    assert "no CPU and no output for 1 s" in str(info.value.output)
    child = Path(f"/proc/{pid_file.read_text().strip()}/stat")
    for _ in range(1200):  # a hang bound: SIGKILL takes effect at once, a loaded machine reaps late
        if not child.exists() or child.read_text().rsplit(")", 1)[1].split()[0] in "ZX":
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the sleep the run started outlived it")


def test_a_busy_run_is_ended_at_its_ceiling():
    with pytest.raises(subprocess.TimeoutExpired) as info:
        run_watched([sys.executable, "-c", "while True: pass"], stall=600, ceiling=1)
    assert "still running after 1 s" in str(info.value.output)


def test_cpu_ticks_count_the_children_too():
    proc = subprocess.Popen(["bash", "-c", f"{sys.executable} -c '{SPINS}'; sleep 30"], start_new_session=True)
    try:
        wait_for(lambda: tree_cpu_ticks(proc.pid) > 50, proc, "half a second of CPU in the child")
    finally:
        kill_tree(proc)


def test_wait_for_fails_when_the_run_ends_first():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    with pytest.raises(AssertionError, match=r"the run ended \(exit status 0\) before the answer"):
        wait_for(lambda: False, proc, "the answer")

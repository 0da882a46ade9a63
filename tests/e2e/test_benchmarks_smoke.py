"""The benchmark suite keeps working: ``python -m benchmarks --smoke`` on a sliver of data.

Only that it runs and reports every section is checked, never a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runner import REPO, run_cli

SECTIONS = ("The fake judge server alone", "Judge throughput", "Full runs with a fast judge", "Fully cached re-run",
            "Start-up on the bundled sample", "Scalar reward models", "Scaling with the data",
            "A small first run: CPU, wall and memory", "Provider prompt caching on `personalized_rb_profile`",
            "Dense retrieval: embedding throughput on the CPU")


@pytest.mark.slow
def test_smoke_run_writes_every_section(tmp_path: Path):
    out = tmp_path / "bench.md"
    proc = run_cli(["--smoke", "--out", str(out), "--work", str(tmp_path / "work")], cwd=REPO,
                   program=[sys.executable, "-m", "benchmarks"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = out.read_text(encoding="utf-8")
    assert "Smoke run" in report and "## Summary" in report
    for title in SECTIONS:
        assert f"## {title}" in report, title
    raw = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))["results"]
    assert {"server", "judge", "full", "cached", "startup", "rm_tiny", "rm_baselines", "scaling", "lean",
            "prompt_cache", "embedding_speed"} <= raw.keys()
    # The embedding section ran its agreement pass for every setup (on the one row the smoke run embeds).
    embedding = raw["embedding_speed"]
    assert embedding["agree_rows"] == 1 and all(v["same_top5"] in (0, 1) for v in embedding["setups"].values())
    # The cached re-runs sent nothing; every full run judged every document.
    assert all(r["requests"] == 0 for entry in raw["cached"] for r in entry["reruns"])
    assert all(t["requests"] > 0 and t["first_request"] is not None for e in raw["full"] for t in e["trials"])


def gone(pid: int, within: float = 30.0) -> bool:
    """True once ``pid`` has ended (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in "ZX":
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc; the parent-death signal is Linux's")
def test_a_killed_benchmark_takes_its_fake_server_with_it():
    code = ("import time; from benchmarks.measure import Server; s = Server(0.0); "
            "print(s.proc.pid, flush=True); time.sleep(120)")
    bench = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True)
    try:
        server = int(bench.stdout.readline())
        assert not gone(server, within=0.5)  # it runs while the benchmark does
        bench.kill()  # as a timeout kills it: no chance to close the server
        bench.wait()
        assert gone(server), f"fake server {server} outlived the benchmark that started it"
    finally:
        try:
            os.killpg(bench.pid, signal.SIGKILL)  # the benchmark and, on failure, its server
        except ProcessLookupError:
            pass
        bench.communicate()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_timed_out_cli_run_is_ended_with_everything_it_started(tmp_path: Path):
    pid_file = tmp_path / "child.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        run_cli([], cwd=tmp_path, stall=3,
                program=["bash", "-c", f"sleep 300 & echo $! > {pid_file}; wait"])
    assert gone(int(pid_file.read_text()), within=120)


def test_bench_rl_help_is_whole_and_its_numbers_are_in_words(tmp_path: Path):
    helped = run_cli(["--help"], cwd=tmp_path, program=[sys.executable, str(REPO / "benchmarks" / "bench_rl.py")])
    assert helped.returncode == 0, helped.stderr[-2000:]
    text = " ".join(helped.stdout.split())
    # Before: the first line of the docstring only, "... and how often" and then the options.
    assert "and how often the policy trained against the reward model that agrees with the grader ends up " \
           "graded higher." in text
    assert "python benchmarks/bench_rl.py --seeds 5" in helped.stdout and "--json" in helped.stdout
    assert max(len(line) for line in helped.stdout.splitlines()) <= 120
    found = {"seeds": 2, "good_higher": 1, "ties": 1, "good_gold": [0.5, 0.25], "bad_gold": [0.25, 0.25],
             "base_gold": [0.25, 0.0], "step_s_median": 0.5, "step_s_max": 1.25, "run_wall_s": [30, 31],
             "peak_rss_mb": 900, "validity_exit": 0, "load": [1.0, 2.0, 3.0]}
    code = f"import benchmarks.bench_rl as b; print('\\n'.join(b.summary_lines({found!r})))"
    words = run_cli([], cwd=REPO, program=[sys.executable, "-c", code])
    assert words.returncode == 0, words.stderr[-2000:]
    assert words.stdout.splitlines() == [  # before: a raw JSON dump
        "seeds: 2; the RM that agrees with the grader ended up graded higher in 1 (1 ties)",
        "gold grade, agreeing RM:     [0.5, 0.25]",
        "gold grade, disagreeing RM:  [0.25, 0.25]",
        "gold grade, starting policy: [0.25, 0.0]",
        "training step: median 0.50 s, max 1.25 s",
        "wall time per run: [30, 31] s; peak memory 900 MB; prb validity exit status 0; load 1.0, 2.0, 3.0"]

"""prb-judge end to end under failure: real ``prb eval`` subprocesses against the fake
server -- keys echoed back, a server dying mid-run, Ctrl-C, two processes sharing one
cache, and a fully cached re-run that must not import litellm."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prb_tasks.judge.answer_cache import cache_info
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.e2e.test_judge_e2e import ENV, KEY, PERFECT, TASK, N, chosen_policy, eval_args, group_metrics, usage_of
from tests.judge.test_judge_reliability import canaries, leaked
from tests.runner import ctrl_c_reaches_child, metric, read_results, read_samples, run_cli
from tests.watchdog import communicate_watched, wait_for


def popen(tmp_path: Path, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    full = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_DATASETS_OFFLINE": "1", **ENV, **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "prb_tasks", *args], cwd=tmp_path, env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_reaches_child)


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def prompts(server: FakeLLMServer) -> list[str]:
    return [json.dumps(r["body"]["messages"]) for r in server.requests]


def test_keys_read_from_the_environment_never_reach_samples_usage_cache_or_output(tmp_path: Path) -> None:
    values = canaries()
    # anthropic/ with no api_key_env: litellm reads ANTHROPIC_API_KEY itself. The server
    # echoes the key in error bodies and replies; some judgments fail for good.
    args = ["eval", "--model", "prb-judge", "--model_args", "", "--tasks", TASK,
            "--output_path", str(tmp_path / "out"), "--log_samples"]
    with FakeLLMServer(chosen_policy(), echo_credentials=True, faults={"500": 0.3}, seed=2) as srv:
        args[4] = (f"model=anthropic/fake,api_base={srv.url},cache_dir={tmp_path / 'cache'},"
                   "max_retries=0,num_concurrent=4")
        proc = run_cli(args, cwd=tmp_path, env=values)
        assert all(r["headers"]["x-api-key"] == values["ANTHROPIC_API_KEY"] for r in srv.requests)
    assert proc.returncode == 0, proc.stderr[-2000:]
    samples = read_samples(tmp_path / "out", "personalized_rb_sample_art")
    replies = [s["resps"][0][0] for s in samples]
    assert any(r.startswith("[prb:error]") for r in replies) and all("request credentials" in r for r in replies)
    assert any("x-api-key: ***" in r for r in replies)
    files = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file())
    assert leaked(values, files, proc.stdout, proc.stderr) == []


@pytest.mark.slow
def test_a_server_dying_mid_run_stops_with_one_line_results_written_and_rerun_resumes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer(chosen_policy(), die_after=30, latency=0.01, record_requests=False) as srv:
        port = srv.port
        started = time.monotonic()
        proc = run_cli(eval_args(srv, cache, tmp_path / "out", "num_concurrent=4"), cwd=tmp_path, env=ENV)
        elapsed = time.monotonic() - started
    assert proc.returncode == 3, proc.stderr[-2000:]
    last = lines(proc.stderr)[-1]
    assert last.startswith("prb eval: the judge stopped early (openai/fake at http://127.0.0.1:")
    assert "stopped answering" in last and "Re-run the same command once the server answers again to resume" in last
    assert "Traceback" not in proc.stderr and elapsed < 120
    kept = cache_info(cache).entries
    results = read_results(tmp_path / "out")  # written, with the rest skipped
    assert 30 <= kept <= 34 and metric(results, TASK, "skip_rate") > 0.4
    assert f"{kept} of {N} judgments are answered" in last
    with FakeLLMServer(chosen_policy(), port=port, record_requests=False) as srv:
        resumed = run_cli(eval_args(srv, cache, tmp_path / "resumed"), cwd=tmp_path, env=ENV)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        assert srv.stats()["total_requests"] == N - kept
    assert group_metrics(tmp_path / "resumed") == PERFECT


@pytest.mark.slow
def test_ctrl_c_prints_one_line_and_a_rerun_sends_nothing_already_answered(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer(chosen_policy(), latency=0.4) as srv:
        proc = popen(tmp_path, eval_args(srv, cache, tmp_path / "out", "num_concurrent=2"))
        wait_for(lambda: srv.stats()["successes"] >= 8, proc, "8 answers")
        proc.send_signal(signal.SIGINT)
        stdout, stderr = communicate_watched(proc)
        first = prompts(srv)
        srv.reset()
        srv.latency = 0.0
        kept = cache_info(cache).entries
        rerun = run_cli(eval_args(srv, cache, tmp_path / "resumed"), cwd=tmp_path, env=ENV)
        again = prompts(srv)
    assert proc.returncode == 130
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    said = [line for line in lines(stderr) if "interrupted" in line]
    assert len(said) == 1 and lines(stderr)[-1] == said[0]  # nothing drawn after it
    match = re.fullmatch(r"prb eval: interrupted; (\d+) new answers were saved in (\S+) \(0 more were already "
                         r"cached, 72 judgments in all\)\. Re-run the same command to resume: saved answers are "
                         r"not sent again\.", said[0])
    assert match is not None, said[0]
    # The server had sent 8 answers; up to num_concurrent (2) of them may still have been on
    # their way (not stored) when Ctrl-C arrived.
    assert int(match.group(1)) == kept >= 8 - 2 and match.group(2) == str(cache)
    assert not (tmp_path / "out").exists()  # lm-eval wrote nothing for the interrupted run
    # The re-run sends exactly what was not saved; of the requests answered before,
    # only those still in flight at the interrupt (<= num_concurrent) go out again.
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert len(again) == N - kept
    assert len(set(again) & set(first)) <= 2
    assert group_metrics(tmp_path / "resumed") == PERFECT
    assert usage_of(tmp_path / "resumed")["cache_hits"] == kept


@pytest.mark.slow
def test_two_processes_on_the_same_task_and_cache_share_the_work(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer(chosen_policy(), latency=0.1, record_requests=False) as srv:
        procs = [popen(tmp_path, eval_args(srv, cache, tmp_path / name, "num_concurrent=4")) for name in "ab"]
        outs = [communicate_watched(p) for p in procs]
        sent = srv.stats()["total_requests"]
    for proc, (_, stderr) in zip(procs, outs):
        assert proc.returncode == 0, stderr[-2000:]
    # At most one run's requests plus those in flight when the second started (4).
    assert N <= sent <= N + 4
    usage = [usage_of(tmp_path / name) for name in "ab"]
    assert sum(u["requests_ok"] for u in usage) == sent
    assert all(u["cache_hits"] + u["requests_ok"] >= N for u in usage)
    assert group_metrics(tmp_path / "a") == group_metrics(tmp_path / "b") == PERFECT
    assert cache_info(cache).entries == N


DRIVER = """
import sys
from prb_tasks.cli import main
code = main(sys.argv[1:])
print("IMPORTED", sorted(m for m in ("litellm", "aiohttp", "openai") if m in sys.modules))
sys.exit(code)
"""


@pytest.mark.slow
def test_a_fully_cached_rerun_never_imports_litellm(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer(chosen_policy(), record_requests=False) as srv:
        first = run_cli(eval_args(srv, cache, tmp_path / "first", "transport=litellm"), cwd=tmp_path, env=ENV,
                        program=[sys.executable, "-c", DRIVER])
        assert first.returncode == 0, first.stderr[-2000:]
        assert "IMPORTED ['aiohttp', 'litellm', 'openai']" in first.stdout  # the driver sees imports
        srv.reset()
        again = run_cli(eval_args(srv, cache, tmp_path / "again", "transport=litellm"), cwd=tmp_path, env=ENV,
                        program=[sys.executable, "-c", DRIVER])
        assert srv.stats()["total_requests"] == 0
    assert again.returncode == 0, again.stderr[-2000:]
    assert "IMPORTED []" in again.stdout
    assert usage_of(tmp_path / "again")["cache_hits"] == N
    assert group_metrics(tmp_path / "again") == PERFECT
    assert KEY not in again.stdout + again.stderr

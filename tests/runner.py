"""Helpers for end-to-end tests: run the real command line and read its results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.watchdog import CEILING_SECONDS, STALL_SECONDS, run_watched

REPO = Path(__file__).resolve().parents[1]


def run_cli(args: list[str], cwd: Path, env: dict[str, str] | None = None,
            program: list[str] | None = None, stall: float = STALL_SECONDS,
            ceiling: float = CEILING_SECONDS) -> subprocess.CompletedProcess:
    """Run ``python -m prb_tasks ARGS`` (or ``program``) and return the finished process.

    There is no wall-clock limit: the run is ended (and the test fails with
    ``subprocess.TimeoutExpired``) only when it is hung (``tests/watchdog.py``).

    Args:
        args: command-line arguments.
        cwd: working directory (tests use one outside the checkout).
        env: extra environment variables.
        program: command to run instead of ``python -m prb_tasks``.
        stall: seconds without CPU use or output after which the run counts as hung.
        ceiling: seconds after which even a busy run is ended (a hang bound, far beyond any run).
    """
    full_env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_DATASETS_OFFLINE": "1",
                "HF_HUB_OFFLINE": "1", **(env or {})}
    command = (program or [sys.executable, "-m", "prb_tasks"]) + args
    # Its own process group: on a hang (or any failure here) the whole group is killed,
    # so what it started (a benchmark's fake server) cannot outlive the test.
    return run_watched(command, cwd=cwd, env=full_env, capture_output=True, text=True, stall=stall,
                       ceiling=ceiling)


def ctrl_c_reaches_child() -> None:
    """``preexec_fn`` for a process a test interrupts with SIGINT: a shell that runs pytest in the
    background (``nohup``, ``cmd &`` without job control) starts it with SIGINT ignored, every child
    inherits that, and Python then never raises KeyboardInterrupt: the test would wait for nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def flat(text: str) -> str:
    """``text`` with every run of whitespace as one space: prb wraps its sentences by words to fit
    120 columns, so a test finds a sentence in the output wherever the line breaks fell."""
    return " ".join(text.split())


def read_results(output_path: Path) -> dict[str, Any]:
    """The newest ``results_*.json`` lm-eval wrote under ``output_path``."""
    files = sorted(output_path.rglob("results_*.json"), key=lambda p: p.stat().st_mtime)
    assert files, f"no results file under {output_path}"
    return json.loads(files[-1].read_text(encoding="utf-8"))


def read_samples(output_path: Path, task: str) -> list[dict[str, Any]]:
    """Every logged sample of ``task`` (needs ``--log_samples``)."""
    files = sorted(output_path.rglob(f"samples_{task}_*.jsonl"))
    assert files, f"no samples file for {task} under {output_path}"
    return [json.loads(line) for line in files[-1].read_text(encoding="utf-8").splitlines() if line]


def sent_prompt(sample: dict[str, Any]) -> str:
    """The user message a logged judge sample sent (its ``arguments``: the prompt is
    logged there once, not in ``doc``)."""
    context = sample["arguments"]["gen_args_0"]["arg_0"]
    # prb-judge logs its messages as JSON text; lm-eval's chat backends wrap that text in a list.
    if isinstance(context, list) and len(context) == 1:
        context = context[0]
    messages = json.loads(context)
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def metric(results: dict[str, Any], task: str, name: str) -> float:
    """One metric value (filter ``none``) of a task or group."""
    return results["results"][task][f"{name},none"]


def run_fake_judge(policy: Any, tasks: str, metadata: str,
                   tmp_path: Path) -> tuple[subprocess.CompletedProcess, Path, int]:
    """`prb eval --model prb-judge` on ``tasks`` against the fake server answering with ``policy``,
    samples logged; returns the process, the output folder and how many requests were sent.

    Args:
        policy: the fake server's answer function ``(messages, model) -> reply``.
        tasks: the ``--tasks`` value.
        metadata: the ``--metadata`` JSON.
        tmp_path: working folder (the outputs and the judge cache go under it).
    """
    from prb_tasks.testing.fake_server import FakeLLMServer

    out = tmp_path / "runs"
    with FakeLLMServer(policy, record_requests=False) as server:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                        f"model=openai/fake,api_base={server.openai_base},cache_dir={tmp_path / 'cache'}",
                        "--tasks", tasks, "--metadata", metadata, "--output_path", str(out),
                        "--log_samples"], cwd=tmp_path, env={"OPENAI_API_KEY": "sk-fake"})
        sent = server.stats()["total_requests"]
    return proc, out, sent


def closed_port() -> int:
    """A local TCP port nothing listens on: one the system just gave out and took back
    (not a fixed number, which something on the machine may be using)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])

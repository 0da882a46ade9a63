"""``prb rl --engine verl`` end to end on one GPU: PPO steps per second, GPU memory and the graded result.

Everything is local (no hub): the tiny random Llama policy of
:func:`prb_tasks.testing.tiny_policy.build_verl_policy` (64-wide attention heads, which vLLM's kernels take;
a Llama, which verl's merger knows: it refuses GPT-2), with vLLM rollouts and FSDP actor and critic,
the served RM of :mod:`prb_tasks.testing.rl_setup` that
rewards short answers (prb-rm ``endpoint=``, scored inside verl's reward worker), the fake grader
whose rubric rewards short answers, the bundled sample. The settings are the ``paper`` preset's
with the batch sizes and lengths shrunk so a run takes a few minutes: 8 prompts per rollout
batch, PPO mini-batch 4, micro-batch 2, 32 new tokens, ``--max-steps`` PPO steps (default 3).
verl's own merger turns the FSDP shards into the HF policy that answers the held-out questions.

    # on the GPU machine, in a second environment (docs/rl-downstream.md "Installing verl")
    pip install -c constraints-verl.txt -e ".[verl]"
    python benchmarks/bench_verl.py [--max-steps 3]

Prints one JSON object: PPO steps per second (verl's ``timing_s/step`` of each step, from
``main_ppo.log``), the GPU's peak memory in use while verl ran (``nvidia-smi``, every second),
the wall time of each phase, and the graded result of the run (the starting policy's and the
trained policy's mean grade), and the engine and verl version the run's results file records. Not a
test: it needs a CUDA GPU, verl and vLLM. Its verl-facing steps run on CPU in tests/rl/test_verl_real.py;
the end-to-end GPU run has not been done yet (docs/rl-downstream.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-local")
# verl asks vLLM for max_model_len = the preset's 8,192 prompt tokens + the response; the tiny policy has
# 1,024 positions, and the benchmark's prompts (one post of 200 characters) stay far below that.
os.environ.setdefault("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")

from prb_tasks.rl.presets import PRESETS
from prb_tasks.testing.fake_server import FakeLLMServer
from prb_tasks.testing.rl_setup import ConciseRM, concise_grader
from prb_tasks.testing.tiny_policy import build_verl_policy

PRESET = "gpu-bench"


class GpuMemory:
    """The largest ``memory.used`` nvidia-smi reports (MiB), polled every second in a thread."""

    def __init__(self) -> None:
        self.peak_mib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, check=False).stdout
            values = [int(v) for v in out.split() if v.isdigit()]
            self.peak_mib = max([self.peak_mib, *values])
            self._stop.wait(1.0)

    def __enter__(self) -> "GpuMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def step_times(log: Path) -> list[float]:
    """verl's seconds per PPO step (``timing_s/step:X`` in its console log)."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    return [float(m) for m in re.findall(r"timing_s/step:([0-9.]+)", text)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-steps", type=int, default=3, help="PPO steps (default 3: one epoch of the sample)")
    parser.add_argument("--keep", type=Path, help="keep the run's folder here (default: a temporary folder)")
    args = parser.parse_args()
    PRESETS[PRESET] = replace(PRESETS["paper"], name=PRESET, bon_preset="prb", train_k=1, test_k=1,
                              test_fraction=0.3, prompts_per_rollout=8, prompts_per_update=4, micro_batch=2,
                              max_new_tokens=32, test_max_new_tokens=32, learning_rate=1e-5, reward_scale=1.0,
                              max_post_chars=200)
    from prb_tasks.cli import main as prb

    with tempfile.TemporaryDirectory() as tmp, ConciseRM() as rm, FakeLLMServer(policy=concise_grader()) as grader:
        root = args.keep or Path(tmp)
        policy = build_verl_policy(root / "policy", seed=0)
        argv = ["rl", "--engine", "verl", "--preset", PRESET, "--policy", str(policy), "--rm", f"endpoint={rm.url}",
                "--grader", f"model=openai/grader,api_base={grader.openai_base}", "--out", str(root / "out"),
                "--data-dir", "sample", "--max-steps", str(args.max_steps), "--gpus-per-node", "1"]
        started = time.perf_counter()
        with GpuMemory() as memory:
            status = prb(argv)
        wall = time.perf_counter() - started
        if status != 0:
            print(json.dumps({"exit": status, "wall_s": round(wall, 1)}))
            return status
        run = next((root / "out" / "runs").iterdir())
        recorded = json.loads(next(run.glob("results_*.json")).read_text())
        results = recorded["results"]["personalized_rb_rl"]
        steps = step_times(next((root / "out" / "policies").glob("*/verl/main_ppo.log")))
    print(json.dumps({
        "ppo_steps": len(steps), "steps_per_s": round(len(steps) / sum(steps), 3) if steps else None,
        "step_s": [round(s, 2) for s in steps], "gpu_peak_mib": memory.peak_mib, "wall_s": round(wall, 1),
        "base_grade": results["bon_gold_k1,none"], "trained_grade": results["bon_gold,none"],
        "gain": results["bon_gain,none"], "ungraded": results["ungraded,none"],
        "engine": recorded["prb"]["rl"]["engine"],
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

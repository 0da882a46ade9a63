"""``prb rl`` on 2 CPU cores: training time and peak memory per step for the tiny setup, and how often
the policy trained against the reward model that agrees with the grader ends up graded higher.

Setup (all offline, :mod:`prb_tasks.testing.rl_setup`): a tiny random GPT-2 policy with a real
BPE tokenizer and chat template; two reward models, a served one (vLLM ``/classify`` format on
an OS-chosen port) rewarding *short* answers and ``scorer=length`` rewarding long ones; a fake
grader (the project's fake server) whose rubric rewards short answers; preset ``smoke`` on the
bundled sample. Each seed is one full ``prb rl`` run (train both, answer, grade, write runs),
then ``prb validity --downstream personalized_rb_rl`` must read the runs.

    python benchmarks/bench_rl.py --seeds 5

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-local")

from prb_tasks.testing.fake_server import FakeLLMServer
from prb_tasks.testing.rl_setup import ConciseRM, concise_grader
from prb_tasks.testing.tiny_policy import build_tiny_policy


def one_seed(root: Path, policy: Path, rm_url: str, grader_url: str, seed: int, max_steps: int | None) -> dict:
    """Run ``prb rl`` once; the two RMs' results and the per-step times."""
    from prb_tasks.cli import main

    out = root / f"seed{seed}"
    good, bad = f"endpoint={rm_url}", "scorer=length"
    argv = ["rl", "--policy", str(policy), "--rm", good, "--rm", bad, "--grader",
            f"model=openai/grader,api_base={grader_url}", "--out", str(out), "--data-dir", "sample",
            "--seed", str(seed)]
    if max_steps:
        argv += ["--max-steps", str(max_steps)]
    started = time.perf_counter()
    status = main(argv)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"prb rl exited {status}")
    found: dict = {"wall_s": wall}
    for run in sorted((out / "runs").iterdir()):
        results = json.loads(next(run.glob("results_*.json")).read_text())
        rm = results["config"]["model_args"]
        found["good" if rm == good else "bad"] = results["results"]["personalized_rb_rl"]
    steps = []
    for state in (out / "policies").glob("*/checkpoint-*/trainer_state.json"):
        history = json.loads(state.read_text())["log_history"]
        steps += [h["step_time"] for h in history if "step_time" in h]
    found["step_times"] = sorted(set(steps))
    return found


def main() -> int:
    # The whole docstring, as written: its first line alone stopped mid-sentence.
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5, help="full prb rl runs, one per seed (default 5)")
    parser.add_argument("--max-steps", type=int, help="override the smoke preset's steps")
    parser.add_argument("--json", action="store_true", help="print the numbers as one JSON object instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ConciseRM() as rm, \
            FakeLLMServer(policy=concise_grader()) as grader:
        root = Path(tmp)
        policy = build_tiny_policy(root / "policy", seed=0)
        rows = [one_seed(root, policy, rm.url, grader.openai_base, seed, args.max_steps) for seed in range(args.seeds)]
        from prb_tasks.cli import main as prb

        # Both RMs' benchmark runs, then validity over the first seed's RL runs.
        for rm_args in (f"endpoint={rm.url}", "scorer=length"):
            prb(["eval", "--model", "prb-rm", "--model_args", rm_args, "--tasks", "personalized_rb_sample_scalar",
                 "--output_path", str(root / "bench"), "--log_samples"])
        validity = prb(["validity", str(root / "seed0" / "runs"), str(root / "bench"),
                        "--downstream", "personalized_rb_rl"])
    wins = sum(r["good"]["bon_gold,none"] > r["bad"]["bon_gold,none"] for r in rows)
    ties = sum(r["good"]["bon_gold,none"] == r["bad"]["bon_gold,none"] for r in rows)
    steps = [t for r in rows for t in r["step_times"]]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    found = {"seeds": args.seeds, "good_higher": wins, "ties": ties,
             "good_gold": [round(r["good"]["bon_gold,none"], 3) for r in rows],
             "bad_gold": [round(r["bad"]["bon_gold,none"], 3) for r in rows],
             "base_gold": [round(r["good"]["bon_gold_k1,none"], 3) for r in rows],
             "step_s_median": sorted(steps)[len(steps) // 2] if steps else None,
             "step_s_max": max(steps) if steps else None, "run_wall_s": [round(r["wall_s"]) for r in rows],
             "peak_rss_mb": round(peak_mb), "validity_exit": validity, "load": os.getloadavg()}
    print(json.dumps(found, indent=1) if args.json else "\n".join(summary_lines(found)))
    return 0


def summary_lines(found: dict) -> list[str]:
    """The numbers of a run in words, one line each (``--json`` prints ``found`` itself).

    Args:
        found: what ``main`` measured (seeds, gold grades per seed, step times, memory, load).
    """
    step = found["step_s_median"]
    return [
        f"seeds: {found['seeds']}; the RM that agrees with the grader ended up graded higher in "
        f"{found['good_higher']} ({found['ties']} ties)",
        f"gold grade, agreeing RM:     {found['good_gold']}",
        f"gold grade, disagreeing RM:  {found['bad_gold']}",
        f"gold grade, starting policy: {found['base_gold']}",
        "training step: " + (f"median {step:.2f} s, max {found['step_s_max']:.2f} s" if step is not None
                             else "no step times recorded"),
        f"wall time per run: {found['run_wall_s']} s; peak memory {found['peak_rss_mb']} MB; "
        f"prb validity exit status {found['validity_exit']}; load "
        + ", ".join(f"{x:.1f}" for x in found["load"]),
    ]


if __name__ == "__main__":
    raise SystemExit(main())

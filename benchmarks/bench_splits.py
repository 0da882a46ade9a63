"""The three evaluation splits (VPL, PAL, LoRe) of one architecture on the taste-group users.

Trains ``--arch`` three times on a tiny random GPT-2 with bench_taste.py's configuration, once
per few-shot ``evaluate`` split (the same seen users each time; for ``seen_users_unseen_prompts``
their last 8 pairs are held out of training), evaluates each on its own split with the few-shot
protocol and prints the aukc (x100) and how many users were evaluated; then evaluates the
``unseen_users`` checkpoint on ``seen_users_unseen_prompts`` and prints the provenance check's
refusal (that checkpoint trained on those users' held-out pairs).

    python benchmarks/bench_splits.py [--arch mixture] [--users 60] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys
import torch
root, arch, threads, config = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
torch.set_num_threads(threads)
from benchmarks.bench_taste import aukc
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.method import MethodError
from prb_tasks.fewshot.split import EVALUATE
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import parse

def options(trained, evaluated):
    meta = {"queries": 8, **({} if evaluated == "unseen_users" else {"evaluate": evaluated})}
    return parse({"data": f"{root}/users.jsonl", "architecture": arch, "backbone": f"{root}/bb",
                  "out": f"{root}/{arch}-{trained}", **config}, json.dumps(meta))

for split in EVALUATE:
    train(options(split, split), progress=False)
    outcomes = run(TrainedMethod(options(split, split).out), load(options(split, split)).few_shot)
    scored = [(o.k, o.user_id, bool(o.correct)) for o in outcomes]
    print(f"{arch:<8}  {EVALUATE[split]:<34}  {100 * aukc(scored):5.1f}  {len({o.user_id for o in outcomes})}",
          flush=True)
wrong = options("unseen_users", "seen_users_unseen_prompts")
try:
    run(TrainedMethod(wrong.out), load(wrong).few_shot)
    print("the unseen_users checkpoint on seen_users_unseen_prompts: NOT refused")
except MethodError as exc:
    print(f"the unseen_users checkpoint on seen_users_unseen_prompts: {exc}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="mixture")
    parser.add_argument("--users", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    from benchmarks.bench_taste import CONFIG
    from prb_tasks.testing.taste_groups import write_taste_users
    from prb_tasks.testing.tiny_rm import build_tiny_base_lm

    with tempfile.TemporaryDirectory() as tmp:
        build_tiny_base_lm(Path(tmp) / "bb", "gpt2")
        write_taste_users(Path(tmp) / "users.jsonl", users=args.users, pairs=16, queries=8)
        print(f"{args.users} taste-group users, {CONFIG}, {args.threads} torch thread(s)")
        print(f"{'arch':<8}  {'split':<34}  {'aukc':>5}  users")
        proc = subprocess.run([sys.executable, "-c", CHILD, tmp, args.arch, str(args.threads), json.dumps(CONFIG)],
                              capture_output=True, text=True)
        print(proc.stdout, end="")
        if proc.returncode:
            print(proc.stderr[-2000:], file=sys.stderr)
        return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

"""Train time and peak memory of ``prb train`` with a tiny backbone on the CPU.

Each architecture trains in a child process (so its peak resident memory is its own) on
the constructed cat/dog users (``prb_tasks.testing.personal_pairs``: 24 users, 16 pairs
each, 12 seen: 192 training pairs) with a tiny random GPT-2 (hidden 32, 2 layers, a
600-token vocabulary), 4 epochs of batches of 8 (96 steps), torch limited to 2 threads,
then is evaluated on the 12 unseen users with the few-shot protocol. Prints one row per
architecture: wall seconds of training, peak resident MB of the whole child, accuracy at
k = 0 and k = 8.

    python benchmarks/bench_train.py [--arch plain,context,latent,mixture] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
import torch
torch.set_num_threads(int(sys.argv[4]))
from prb_tasks.fewshot.evaluate import run
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import parse
root, arch = sys.argv[1], sys.argv[2]
extra = json.loads(sys.argv[3])
options = parse({"data": f"{root}/users.jsonl", "architecture": arch, "backbone": f"{root}/bb",
                 "out": f"{root}/{arch}", "epochs": 4, "learning_rate": 3e-3, "batch_size": 8,
                 "support_max": 4, "max_length": 96, **extra}, None)
started = time.perf_counter()
train(options, progress=False)
seconds = time.perf_counter() - started
outcomes = run(TrainedMethod(options.out), load(options).few_shot)
acc = {k: float(np.mean([o.correct for o in outcomes if o.k == k])) for k in (0, 8)}
import resource
print(json.dumps({"seconds": seconds, "acc": acc, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""  # noqa: E501 - a script run as text: its lines are not this file's code
EXTRA = {"context": {"context_parts": "demographics"}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="plain,context,latent,mixture")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from prb_tasks.testing.personal_pairs import write_users
    from prb_tasks.testing.tiny_rm import build_tiny_base_lm

    with tempfile.TemporaryDirectory() as tmp:
        build_tiny_base_lm(Path(tmp) / "bb", "gpt2")
        write_users(Path(tmp) / "users.jsonl")
        print("architecture  train s  peak MB  acc k=0  acc k=8")
        for arch in args.arch.split(","):
            proc = subprocess.run([sys.executable, "-c", CHILD, tmp, arch, json.dumps(EXTRA.get(arch, {})),
                                   str(args.threads)], capture_output=True, text=True)
            if proc.returncode:
                print(proc.stderr[-2000:], file=sys.stderr)
                return 1
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{arch:<12}  {got['seconds']:7.1f}  {got['peak_mb']:7.0f}  "
                  f"{got['acc']['0']:7.2f}  {got['acc']['8']:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

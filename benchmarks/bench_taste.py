"""Seeds x architectures on the taste-group users: aukc mean, spread between seeds, CI over users.

The data is :mod:`prb_tasks.testing.taste_groups` (``--users`` users, default 60, in three taste
groups; each user's group shows through demographics, profile posts or the choices only; 16
pairs each, the last 8 the few-shot protocol's queries, so k = 0, 1, 2, 4, 8; no label noise).
Every (architecture, seed) trains in a child process on a tiny random GPT-2 (hidden 32, 2
layers, built once with seed 0) with the small configuration ``CONFIG`` (4 epochs, batches of
8, learning rate 3e-3, at most 4 support pairs, inputs of at most 64 tokens), torch limited to
``--threads`` threads, and is evaluated with the few-shot protocol on the unseen users (half of
them, split_seed 0). One latent run takes about 70 s on one thread of an idle core.

Printed per architecture: aukc (x100) of each seed, their mean, the spread between seeds (the
sample standard deviation of the seeds' aukc; what differs is ``--seed`` of prb train: the
initialisation of the heads, the batch order and the support sampled per training pair), and
the 95% interval of the first seed's aukc over users (users resampled with replacement, 2,000
times, all queries of a drawn user kept; the interval says how much the evaluated users move
the number, the spread how much the training run does).

``--expect latent=74`` exits 1 when an architecture's mean aukc falls below its floor: the
check that would have flagged a drop such as issue 62's (latent 74.3 -> 68.7).

    python benchmarks/bench_taste.py [--arch plain,latent,mixture] [--seeds 3] [--threads 1] [--set max_length=320]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

#: The small training configuration every run uses (prb train's option names).
CONFIG = {"epochs": 4, "learning_rate": 3e-3, "batch_size": 8, "support_max": 4, "max_length": 64}
#: context reads the parts the data has (demographics and profile; history from the support pairs).
EXTRA: dict[str, dict[str, object]] = {}
BOOTSTRAP = 2000

CHILD = r"""
import json, sys
import torch
root, arch, seed, threads, config = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
torch.set_num_threads(threads)
from prb_tasks.fewshot.evaluate import run
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import parse
options = parse({"data": f"{root}/users.jsonl", "architecture": arch, "backbone": f"{root}/bb",
                 "out": f"{root}/{arch}-seed-{seed}", "seed": seed, **json.loads(config)}, None)
train(options, progress=False)
outcomes = run(TrainedMethod(options.out), load(options).few_shot)
print(json.dumps([[o.k, o.user_id, bool(o.correct)] for o in outcomes]))
"""


def aukc(outcomes: list[tuple[int, str, bool]], weights: dict[str, int] | None = None) -> float:
    """Area under the k-curve of per-user macro accuracies (prb_tasks.fewshot.metrics), each user
    counted ``weights[user]`` times (a bootstrap draw; None: once)."""
    from prb_tasks.fewshot.metrics import area_under_curve

    per: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for k, user, correct in outcomes:
        per[k][user].append(float(correct))
    curve = {}
    for k, users in per.items():
        w = {u: 1 if weights is None else weights.get(u, 0) for u in users}
        total = sum(w.values())
        curve[k] = sum(w[u] * float(np.mean(v)) for u, v in users.items()) / total if total else float("nan")
    return area_under_curve(curve)


def user_interval(outcomes: list[tuple[int, str, bool]], seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of :func:`aukc` with users resampled (see the module docstring)."""
    users = sorted({u for _, u, _ in outcomes})
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(BOOTSTRAP):
        picked = rng.integers(0, len(users), size=len(users))
        counts = np.bincount(picked, minlength=len(users))
        draws.append(aukc(outcomes, {u: int(c) for u, c in zip(users, counts)}))
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return float(low), float(high)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="plain,latent,mixture")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--users", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--set", default="", help="KEY=VALUE,... : prb train options over CONFIG (max_length=320)")
    parser.add_argument("--expect", default="", help="ARCH=FLOOR,... : exit 1 when a mean aukc is below")
    args = parser.parse_args()
    from prb_tasks.testing.taste_groups import write_taste_users
    from prb_tasks.testing.tiny_rm import build_tiny_base_lm

    config = dict(CONFIG)
    for item in (i for i in args.set.split(",") if i):
        key, value = item.split("=", 1)
        config[key] = json.loads(value) if value[:1].isdigit() or value in ("true", "false") else value
    floors = {a: float(v) for a, v in (item.split("=") for item in args.expect.split(",") if item)}
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        build_tiny_base_lm(Path(tmp) / "bb", "gpt2")
        write_taste_users(Path(tmp) / "users.jsonl", users=args.users, pairs=16, queries=8)
        print(f"{args.users} taste-group users, {config}, {args.threads} torch thread(s); aukc x100")
        print(f"{'architecture':<12}  {'seeds':<24}  {'mean':>5}  {'sd seeds':>8}  CI over users (seed 0)")
        for arch in args.arch.split(","):
            scores, first = [], None
            for seed in range(args.seeds):
                proc = subprocess.run([sys.executable, "-c", CHILD, tmp, arch, str(seed), str(args.threads),
                                       json.dumps({**config, **EXTRA.get(arch, {})})],
                                      capture_output=True, text=True)
                if proc.returncode:
                    print(proc.stderr[-2000:], file=sys.stderr)
                    return 1
                outcomes = [tuple(o) for o in json.loads(proc.stdout.strip().splitlines()[-1])]
                scores.append(100 * aukc(outcomes))  # type: ignore[arg-type]
                first = first or outcomes
            low, high = user_interval(first)  # type: ignore[arg-type]
            spread = statistics.stdev(scores) if len(scores) > 1 else float("nan")
            mean = statistics.fmean(scores)
            print(f"{arch:<12}  {' '.join(f'{s:.1f}' for s in scores):<24}  {mean:5.1f}  {spread:8.1f}  "
                  f"{100 * low:.1f}-{100 * high:.1f}", flush=True)
            if arch in floors and mean < floors[arch]:
                failed.append(f"{arch}: mean aukc {mean:.1f} < {floors[arch]}")
    for line in failed:
        print(f"bench_taste: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

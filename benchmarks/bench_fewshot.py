"""Wall time and peak memory of each CPU few-shot baseline over all k, at PersonalLLM's size.

Writes a synthetic PersonalLLM copy with the real shape (1,000 prompts, 8 responses, 80
reward columns; rewards drawn at random around the published means) in the HF layout,
then runs each baseline in a fresh process: simulate the users (1,000 by default, 24
clear choices each), split them (half seen, half unseen: 8 queries and a pool of 16
support pairs each), learn from the seen users, and adapt and score at k = 0, 1, 2, 4,
8, 16. Reports each phase's seconds, the process's peak resident memory, and the
baseline's k-curve on this *synthetic* data (its accuracies say nothing about real users):

    python benchmarks/bench_fewshot.py                  # 1,000 users
    python benchmarks/bench_fewshot.py --users 2000 --trials 3

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_personalllm import write_copy
from benchmarks.measure import python, run

#: (shown name, method, options as JSON): every shipped CPU baseline at its defaults, and the
#: low-rank basis at full rank (the synthetic rewards are independent, so users need all 10).
BASELINES = (("nonpersonalized", "nonpersonalized", "{}", "auto"), ("similar_users", "similar_users", "{}", "auto"),
             ("lowrank", "lowrank", "{}", "auto"), ("lowrank rank=10", "lowrank", '{"rank": 10}', "auto"),
             ("oracle", "oracle", "{}", "auto"))
#: With --embedding: the low-rank basis over text embeddings (the shared encoder) instead.
EMBEDDING = (("lowrank, embeddings", "lowrank", "{}", "embedding"),)

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from prb_tasks.documents.fewshot import FewshotOptions, personalllm_data
from prb_tasks.fewshot import registry
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.metrics import curve_area, k_curve
t1 = time.perf_counter()
data, _, _ = personalllm_data(FewshotOptions(data_dir=sys.argv[1], n_users=int(sys.argv[2]), features=sys.argv[5]))
t2 = time.perf_counter()
method = registry.build(sys.argv[3], json.loads(sys.argv[4]))
method.learn(data.seen_users())
t3 = time.perf_counter()
method.learn = lambda seen: None   # learned above; run() would call it again
outcomes = run(method, data)
t4 = time.perf_counter()
points = k_curve((o.k, o.user_id, o.correct) for o in outcomes)
print(json.dumps({"import": t1 - t0, "data": t2 - t1, "learn": t3 - t2, "adapt + score, all k": t4 - t3,
                  "queries": len(outcomes), "unseen": len(data.split.unseen), "seen": len(data.split.seen),
                  "curve": {p.k: p.accuracy.value for p in points}, "aukc": curve_area(points)}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1000, help="simulated users (PersonalLLM's default 1,000)")
    parser.add_argument("--trials", type=int, default=1, help="fresh processes per baseline (median reported)")
    parser.add_argument("--chars", type=int, default=1500, help="approximate characters per response")
    parser.add_argument("--embedding", action="store_true",
                        help="also the low-rank basis over text embeddings (needs the embed extra; slow on CPU)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_copy(root, args.chars)
        print(f"synthetic PersonalLLM copy: 1000 prompts x 8 responses; {args.users} users, 24 clear choices each; "
              f"{args.trials} trial(s) per baseline, median")
        head = f"{'baseline':<20} {'data s':>8} {'learn s':>8} {'adapt+score s':>13} {'total s':>8} {'peak MB':>8}"
        print(head)
        curves = {}
        for name, method, options, features in BASELINES + (EMBEDDING if args.embedding else ()):
            trials = []
            for _ in range(args.trials):
                child = run(python("-c", CHILD, str(root), str(args.users), method, options, features)).check()
                trials.append((child, json.loads(child.stdout.strip().splitlines()[-1])))
            med = {key: statistics.median(t[1][key] for t in trials)
                   for key in ("data", "learn", "adapt + score, all k")}
            wall = statistics.median(t[0].wall for t in trials)
            peak = statistics.median(t[0].peak_rss_mb for t in trials)
            print(f"{name:<20} {med['data']:>8.2f} {med['learn']:>8.2f} "
                  f"{med['adapt + score, all k']:>13.2f} {wall:>8.2f} {peak:>8.0f}")
            curves[name] = trials[0][1]
        first = next(iter(curves.values()))
        print(f"\n{first['seen']} seen, {first['unseen']} unseen users, {first['queries']} scored queries per baseline "
              "(data s: simulate users, features, split; total s: the whole process, imports included)")
        ks = list(first["curve"])
        print("k-curve on this SYNTHETIC data (accuracy %):")
        print(f"{'baseline':<20} " + " ".join(f"{'k=' + k:>6}" for k in ks) + f" {'aukc':>6}")
        for name, c in curves.items():
            print(f"{name:<20} " + " ".join(f"{100 * c['curve'][k]:>6.1f}" for k in ks) + f" {100 * c['aukc']:>6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

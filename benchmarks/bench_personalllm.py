"""How long the PersonalLLM loader takes at full size: reading and validating the test
split, simulating the users, and building the documents of each variant.

Writes a synthetic copy with the real shape (1,000 prompts, 8 responses of about
``--chars`` characters each, 80 reward columns) in the HF layout to a temporary
folder, then times each stage in a fresh process per trial (so no cache helps):

    python benchmarks/bench_personalllm.py                 # 3 trials, default 1,000 users
    python benchmarks/bench_personalllm.py --users 5000 --trials 5

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

STAGES = r"""
import json, sys, time
t0 = time.perf_counter()
from prb_tasks.data.personalllm.sources import load_prompts
from prb_tasks.data.personalllm.items import SimulationConfig, simulate
from prb_tasks.documents import personalllm
t1 = time.perf_counter()
rows = load_prompts(sys.argv[1])
t2 = time.perf_counter()
sim = simulate(rows, SimulationConfig(n_users=int(sys.argv[2])), quiet=True)
t3 = time.perf_counter()
out = {"import": t1 - t0, "read + validate": t2 - t1, "simulate users": t3 - t2}
for variant in ("judge", "scalar", "scalar_history", "bon", "bon_judge"):
    start = time.perf_counter()
    docs = personalllm.build_docs(variant, data_dir=sys.argv[1], n_users=int(sys.argv[2]))
    out[f"docs: {variant} ({len(docs)})"] = time.perf_counter() - start
print(json.dumps(out))
"""


def write_copy(root: Path, chars: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm

    rows = fixture_rows(1000, seed=0)
    rng = random.Random(0)
    words = "the a of to and in for with on your you can this that it is be are as an".split()
    for row in rows:
        for i in range(1, 9):
            row[f"response_{i}"] += " " + " ".join(rng.choice(words) for _ in range(chars // 4))
    write_personalllm(root, rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--chars", type=int, default=1500, help="approximate characters per response")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_copy(root, args.chars)
        size = sum(p.stat().st_size for p in (root / "data").iterdir()) / 1e6
        print(f"synthetic copy: 1000 prompts x 8 responses (~{args.chars} chars), {size:.1f} MB parquet; "
              f"{args.users} users; {args.trials} trials, median seconds")
        trials = []
        for _ in range(args.trials):
            proc = subprocess.run([sys.executable, "-c", STAGES, str(root), str(args.users)],
                                  capture_output=True, text=True, check=True)
            trials.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for stage in trials[0]:
        print(f"  {stage:<32} {statistics.median(t[stage] for t in trials):7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

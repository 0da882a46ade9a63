"""Wall time of the ``embedding`` baseline on full-size synthetic data, through ``prb eval``.

Generates the full-size data once (``benchmarks/fullsize_data.py``; 2,830 rows, ~90 KB
profiles) unless ``--data DIR`` points to a copy, then runs, as a user would::

    prb eval --model prb-rm --model_args scorer=embedding,cache=off[,...] \\
             --tasks personalized_rb_scalar --metadata '{"data_dir": DIR}'

and reports the wall time, the pairs/s line ``prb-rm`` prints and the encoder's texts/s,
with the machine's core count and load (other processes slow every number down).

    python benchmarks/bench_embedding.py                              # full size, dtype auto
    python benchmarks/bench_embedding.py --model-args dtype=float32   # the float32 path
    python benchmarks/bench_embedding.py --limit 50                   # a quick smoke run

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _data(path: Path | None, seed: int) -> Path:
    if path is not None:
        return path
    target = Path(os.environ.get("TMPDIR", "/tmp")) / f"prb-fullsize-seed{seed}"
    if not (target / "Society_and_Culture").is_dir():
        sys.path.insert(0, str(HERE))
        from fullsize_data import generate

        print(f"generating full-size data in {target} ...", flush=True)
        print(json.dumps(generate(target, seed=seed), indent=2), flush=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="a full-size copy in the HF layout (default: generate one)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    parser.add_argument("--tasks", default="personalized_rb_scalar")
    parser.add_argument("--model-args", default="", help="extra prb-rm model_args, e.g. dtype=float32")
    parser.add_argument("--limit", type=int, help="pairs per subset (lm-eval --limit), for a smoke run")
    args = parser.parse_args()

    data = _data(args.data, args.seed)
    model_args = ",".join(p for p in ("scorer=embedding", "cache=off", args.model_args) if p)
    command = [sys.executable, "-m", "prb_tasks", "eval", "--model", "prb-rm", "--model_args", model_args,
               "--tasks", args.tasks, "--metadata", json.dumps({"data_dir": str(data)})]
    if args.limit:
        command += ["--limit", str(args.limit)]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    if proc.returncode != 0:
        sys.exit(f"prb eval failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    rate = re.search(r"prb-rm \(embedding\): (\d+) responses \(([\d.]+) pairs\) in ([\d.]+) s, ([\d.]+) pairs/s",
                     proc.stderr)
    note = re.search(r"embedding: encoded (.*)", proc.stderr)
    acc = re.search(rf"\|{re.escape('Personalized RewardBench')}[^|]*\|[^|]*\|[^|]*\|[^|]*\|acc +\|[^|]*\|([\d.]+)",
                    proc.stdout)
    print(f"command: {' '.join(command[1:])}")
    print(f"machine: {os.cpu_count()} cores, load average {load_before:.1f} before / {load_after:.1f} after")
    print(f"wall time: {wall:.1f} s ({wall / 60:.1f} min)")
    if rate:
        print(f"scoring: {rate.group(1)} responses ({rate.group(2)} pairs) in {rate.group(3)} s, "
              f"{rate.group(4)} pairs/s")
    if note:
        print(f"encoder: {note.group(1)}")
    if acc:
        print(f"acc (synthetic data, meaningless as a result): {acc.group(1)}")


if __name__ == "__main__":
    main()

"""Duplicate spending of two ``prb eval`` processes sharing one judge cache.

Two processes run the same judge task against the same cache folder at the same time
(e.g. someone starts the same command twice, or a job scheduler retries while the first
attempt still runs). Every request either process sends is counted by the fake server
(own process, fixed latency); the *duplicate share* is

    (requests sent by both processes - distinct requests) / distinct requests

0% means the two processes never paid twice for anything; 100% means each sent
everything. The task is ``personalized_rb`` on a local copy built from the bundled
sample, repeated ``--copies`` times with distinct questions (72 requests per copy).

``--code DIR`` picks the prb code that runs (it is put first on ``PYTHONPATH``), so the
same script measures before and after a change::

    python benchmarks/bench_shared_cache.py --code /path/to/old/checkout
    python benchmarks/bench_shared_cache.py --code . --copies 4 --latency 0.1 --concurrency 8 --trials 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from measure import Server, add_judge_run_options, server_stats  # noqa: E402

FILE = "test-00000-of-00001.jsonl"


def build_data(target: Path, copies: int) -> int:
    """Write ``copies`` renamed copies of the bundled sample in the HF layout; return the row count."""
    rows_total = 0
    from prb_tasks.common.resources import sample_dir

    sample = sample_dir()
    for subset in sorted(p.name for p in sample.iterdir() if p.is_dir()):
        rows = [json.loads(line) for line in (sample / subset / FILE).read_text(encoding="utf-8").splitlines() if line]
        out = []
        for copy in range(copies):
            for row in rows:
                out.append({**row, "id": f"{row['id']}-c{copy}", "question": f"{row['question']} (variant {copy})"})
        (target / subset).mkdir(parents=True, exist_ok=True)
        (target / subset / FILE).write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
        rows_total += len(out)
    return rows_total


def trial(code: Path, url: str, data: Path, work: Path, concurrency: int, stagger: float) -> tuple[int, float]:
    """Run two processes on one fresh cache; return (requests sent, wall seconds)."""
    cache = work / "cache"
    env = {**os.environ, "PYTHONPATH": str(code), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PRB_BENCH_KEY": "sk-bench-not-a-real-key"}
    before = int(server_stats(url)["total_requests"])
    started = time.monotonic()
    procs = []
    for name in ("a", "b"):
        args = [sys.executable, "-m", "prb_tasks", "eval", "--model", "prb-judge",
                "--model_args", f"model=openai/fake,api_base={url}/v1,api_key_env=PRB_BENCH_KEY,"
                                f"cache_dir={cache},num_concurrent={concurrency}",
                "--tasks", "personalized_rb", "--metadata", json.dumps({"data_dir": str(data)}),
                "--output_path", str(work / name)]
        procs.append(subprocess.Popen(args, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True))
        time.sleep(stagger)
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"prb eval failed ({proc.returncode}):\n{err[-2000:]}")
    return int(server_stats(url)["total_requests"]) - before, time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_judge_run_options(parser, copies=4, latency=0.1, concurrency=8)
    parser.add_argument("--stagger", type=float, default=0.0, help="seconds between the two starts")
    args = parser.parse_args(argv)

    server = Server(args.latency, retry_after=0.05)
    url = server.url
    shares, walls = [], []
    try:
        with tempfile.TemporaryDirectory(prefix="prb-bench-share-") as tmp:
            data = Path(tmp) / "data"
            distinct = 2 * build_data(data, args.copies)  # both orders of every pair
            for n in range(args.trials):
                work = Path(tmp) / f"trial{n}"
                work.mkdir()
                sent, wall = trial(args.code.resolve(), url, data, work, args.concurrency, args.stagger)
                share = (sent - distinct) / distinct
                shares.append(share)
                walls.append(wall)
                print(f"trial {n + 1}: {sent} requests sent for {distinct} distinct: duplicate share "
                      f"{share:.1%} ({wall:.1f} s for both processes)", flush=True)
    finally:
        server.close()
    print(f"code {args.code}: median duplicate share {statistics.median(shares):.1%} "
          f"(trials {', '.join(f'{s:.1%}' for s in shares)}); median wall {statistics.median(walls):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

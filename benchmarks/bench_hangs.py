"""Wall time of a ``prb eval`` judge run against a server that hangs on some requests.

The fake judge server (own process, fixed latency) either answers every request
(*fault-free*) or, on a share of attempts (``--hang-share``, 11% by default), reads the
request and then answers nothing for 30 s, far past the judge's ``timeout`` (*hangs*).
Each trial runs the same ``prb eval`` command on both servers with a fresh cache and
reports, for each: the process's wall time, the judge phase's wall time (``wall_s`` in
the usage summary: from the first request to the last answer), requests sent, timeouts,
and the slowdown = hangs / fault-free. The task is ``personalized_rb`` on a local copy
built from the bundled sample, ``--copies`` times (72 requests per copy).

``--code DIR`` picks the prb code that runs (first on ``PYTHONPATH``), so the same script
measures before and after a change::

    python benchmarks/bench_hangs.py                                  # this checkout
    python benchmarks/bench_hangs.py --code /tmp/prb-before --trials 1
    python benchmarks/bench_hangs.py --copies 6 --latency 0.2 --timeout 2 --concurrency 16 --trials 3
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_shared_cache import build_data  # noqa: E402
from measure import Server, add_judge_run_options, server_stats  # noqa: E402


def judge_run(code: Path, url: str, data: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One ``prb eval`` run; its walls, requests sent and usage counts."""
    env = {**os.environ, "PYTHONPATH": str(code), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PRB_BENCH_KEY": "sk-bench-not-a-real-key"}
    out = work / "out"
    command = [sys.executable, "-m", "prb_tasks", "eval", "--model", "prb-judge",
               "--model_args", f"model=openai/fake,api_base={url}/v1,api_key_env=PRB_BENCH_KEY,"
                               f"cache_dir={work / 'cache'},num_concurrent={args.concurrency},timeout={args.timeout:g}",
               "--tasks", "personalized_rb", "--metadata", json.dumps({"data_dir": str(data)}),
               "--output_path", str(out)]
    before = int(server_stats(url)["total_requests"])
    started = time.monotonic()
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=args.limit)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"prb eval failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    usage = json.loads(sorted(out.rglob("usage_*.json"))[-1].read_text(encoding="utf-8"))
    return {
        "wall_s": round(wall, 2),
        "judge_s": usage["wall_s"],
        "sent": int(server_stats(url)["total_requests"]) - before,
        "timeouts": usage["failed_attempts_by_kind"].get("timeout", 0),
        "errors": usage["errors"],
        "lowest_concurrency": usage["lowest_concurrency"],
        "set_aside": usage.get("requests_set_aside_as_hung"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_judge_run_options(parser, copies=6, latency=0.2, concurrency=16)
    parser.add_argument("--hang-share", type=float, default=0.11, help="share of attempts the server hangs on")
    parser.add_argument("--timeout", type=float, default=2.0, help="the judge's timeout= per attempt, seconds")
    parser.add_argument("--limit", type=float, default=3600, help="seconds before one run is given up")
    args = parser.parse_args(argv)

    code = args.code.resolve()
    clean = Server(args.latency)
    hanging = Server(args.latency, faults=[f"timeout={args.hang_share}"])
    rows: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="prb-bench-hangs-") as tmp:
            data = Path(tmp) / "data"
            judgments = 2 * build_data(data, args.copies)  # both orders of every pair
            for n in range(args.trials):
                row: dict[str, Any] = {}
                for name, server in (("fault_free", clean), ("hangs", hanging)):
                    work = Path(tmp) / f"trial{n}-{name}"
                    work.mkdir()
                    row[name] = judge_run(code, server.url, data, work, args)
                row["slowdown_wall"] = round(row["hangs"]["wall_s"] / row["fault_free"]["wall_s"], 2)
                row["slowdown_judge"] = round(row["hangs"]["judge_s"] / row["fault_free"]["judge_s"], 2)
                rows.append(row)
                print(f"trial {n + 1}: {judgments} judgments; fault-free {row['fault_free']['wall_s']:.1f} s "
                      f"(judging {row['fault_free']['judge_s']:.1f} s), with {args.hang_share:.0%} hangs "
                      f"{row['hangs']['wall_s']:.1f} s (judging {row['hangs']['judge_s']:.1f} s, "
                      f"{row['hangs']['timeouts']} timeouts, lowest concurrency {row['hangs']['lowest_concurrency']}): "
                      f"slowdown {row['slowdown_wall']:.2f}x wall, {row['slowdown_judge']:.2f}x judging", flush=True)
    finally:
        clean.close()
        hanging.close()
    summary = {
        "code": str(code), "judgments": judgments, "latency": args.latency, "hang_share": args.hang_share,
        "timeout": args.timeout, "concurrency": args.concurrency,
        "median_slowdown_wall": statistics.median(r["slowdown_wall"] for r in rows),
        "median_slowdown_judge": statistics.median(r["slowdown_judge"] for r in rows),
        "trials": rows,
    }
    print(f"median slowdown under {args.hang_share:.0%} hangs: {summary['median_slowdown_wall']:.2f}x wall, "
          f"{summary['median_slowdown_judge']:.2f}x judging")
    print("RESULT " + json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

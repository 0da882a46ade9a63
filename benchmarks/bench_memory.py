"""Peak memory of ``personalized_rb_profile`` as the data grows (1x, 2x, 4x the published size).

Each run is ``prb eval --tasks personalized_rb_profile`` with ``prb-judge`` against the
fake server answering at once (cache off, an empty retrieval cache: a first run), with
``--output_path --log_samples``, in a fresh process whose peak resident memory comes from
``wait4``. ``--trace`` adds one more run per scale under ``tracemalloc`` and prints the
lines that held the most Python memory at the peak (slow; Arrow's buffers are not
Python allocations and show up only in the RSS).

    python benchmarks/bench_memory.py                          # 1x, 2x, 4x (generates the data)
    python benchmarks/bench_memory.py --scales 1,2 --work /tmp/prb-mem --trials 1

``--baseline DIR`` also runs another copy of the code (a folder holding a ``prb_tasks``
package, e.g. ``git archive <commit> prb_tasks templates | tar -x -C DIR``; put first on
``PYTHONPATH``) before each run of this one, so before and after are measured interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from measure import BENCH, Server, Spread, load, python, run

TRACER = """
import sys, tracemalloc, linecache
tracemalloc.start(4)
from prb_tasks.cli import main
code = main(sys.argv[1:])
current, peak = tracemalloc.get_traced_memory()
print(f"TRACE peak Python allocations {peak / 1e6:.0f} MB")
sys.exit(code)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="1,2,4", help="data sizes, multiples of the published 2,830 rows")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--work", type=Path, help="folder for the data (kept) and outputs")
    parser.add_argument("--trace", action="store_true", help="also report tracemalloc's peak of Python allocations")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--baseline", type=Path,
                        help="folder holding another prb_tasks package, run interleaved with this one")
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="prb-mem-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, list[float]]] = {}
    print(f"load before {load()}")
    with Server(0.0) as server:
        for scale in (float(s) for s in args.scales.split(",")):
            data = work / f"data-{scale:g}x"
            if not (data / "Society_and_Culture").is_dir():
                run(python(str(BENCH / "fullsize_data.py"), str(data), "--scale", str(scale), "--seed", "0")).check()
            peak, wall = Spread(), Spread()
            if args.baseline:
                before_peak, before_wall = Spread(), Spread()
            for _ in range(args.trials + (1 if args.trace else 0)):
                traced = args.trace and len(peak.values) == args.trials
                out, cache = work / "out", work / "retrieval-cache"
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(cache, ignore_errors=True)
                eval_args = ["eval", "--model", "prb-judge", "--model_args",
                             f"model=openai/fake,api_base={server.url}/v1,cache=off,num_concurrent=64",
                             "--tasks", "personalized_rb_profile", "--metadata", json.dumps({"data_dir": str(data)}),
                             "--output_path", str(out), "--log_samples"]
                command = python("-c", TRACER, *eval_args) if traced else python("-m", "prb_tasks", *eval_args)
                env = {"OPENAI_API_KEY": "sk-bench-not-a-real-key", "PRB_CACHE_DIR": str(cache)}
                if args.baseline and not traced:
                    paths = [str(args.baseline.resolve()), *filter(None, [os.environ.get("PYTHONPATH")])]
                    before = run(command, env={**env, "PYTHONPATH": os.pathsep.join(paths)}, cwd=work).check()
                    before_peak.add(before.peak_rss_mb)
                    before_wall.add(before.wall)
                    print(f"{scale:g}x baseline: peak RSS {before.peak_rss_mb:.0f} MB, wall {before.wall:.1f} s",
                          flush=True)
                    shutil.rmtree(out, ignore_errors=True)
                    shutil.rmtree(cache, ignore_errors=True)
                done = run(command, env=env, cwd=work).check()
                if traced:
                    line = next(out for out in done.stdout.splitlines() if out.startswith("TRACE "))
                    print(f"{scale:g}x: {line[6:]} (peak RSS under tracing {done.peak_rss_mb:.0f} MB)", flush=True)
                    continue
                peak.add(done.peak_rss_mb)
                wall.add(done.wall)
                print(f"{scale:g}x: peak RSS {done.peak_rss_mb:.0f} MB, wall {done.wall:.1f} s", flush=True)
            if args.baseline:
                results[f"{scale:g}x baseline"] = {"peak_rss_mb": before_peak.values, "wall_s": before_wall.values}
            results[f"{scale:g}x"] = {"peak_rss_mb": peak.values, "wall_s": wall.values}
    print(f"\npersonalized_rb_profile, first run, {args.trials} trial(s) per scale (median, min-max); "
          f"load after {load()}")
    for name, values in results.items():
        print(f"{name:>14s}: peak RSS {Spread(values['peak_rss_mb']).text(0)} MB, "
              f"wall {Spread(values['wall_s']).text(1)} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

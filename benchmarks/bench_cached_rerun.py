"""Wall time of a fully cached ``prb eval`` re-run with ``prb-judge``.

A re-run whose answers are all in the cache sends nothing; what it costs is start-up
(lm-eval, the tasks) plus whatever the judge backend loads. This fills a cache once
(fake server, own process), then times ``--trials`` re-runs of the same command in fresh
processes and reports whether litellm was imported (it should not be: nothing is
priced or sent).

``--code DIR`` picks the prb code that runs (first on ``PYTHONPATH``)::

    python benchmarks/bench_cached_rerun.py                   # this checkout
    python benchmarks/bench_cached_rerun.py --code /path/to/old/checkout --trials 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from measure import Server  # noqa: E402

DRIVER = (
    "import sys\nfrom prb_tasks.cli import main\ncode = main(sys.argv[1:])\n"
    "print('LITELLM_IMPORTED', 'litellm' in sys.modules)\nsys.exit(code)\n"
)


def run(code: Path, url: str, cache: Path, out: Path, transport: str) -> tuple[float, bool]:
    env = {**os.environ, "PYTHONPATH": str(code), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PRB_BENCH_KEY": "sk-bench-not-a-real-key"}
    args = ["eval", "--model", "prb-judge",
            "--model_args", f"model=openai/fake,api_base={url}/v1,api_key_env=PRB_BENCH_KEY,cache_dir={cache},"
                            f"transport={transport}",
            "--tasks", "personalized_rb_sample", "--output_path", str(out)]
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", DRIVER, *args], env=env, cwd=out.parent, capture_output=True,
                          text=True)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"prb eval failed:\n{proc.stderr[-2000:]}")
    return wall, "LITELLM_IMPORTED True" in proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="prb checkout to run (default: this one)")
    parser.add_argument("--transport", default="litellm", choices=("litellm", "auto"))
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args(argv)
    server = Server(0.0, retry_after=0.05)
    url = server.url
    try:
        with tempfile.TemporaryDirectory(prefix="prb-bench-rerun-") as tmp:
            cache = Path(tmp) / "cache"
            fill, _ = run(args.code.resolve(), url, cache, Path(tmp) / "fill", args.transport)
            print(f"first run (72 judgments sent): {fill:.1f} s", flush=True)
            walls, imported = [], []
            for n in range(args.trials):
                wall, lite = run(args.code.resolve(), url, cache, Path(tmp) / f"rerun{n}", args.transport)
                walls.append(wall)
                imported.append(lite)
                print(f"cached re-run {n + 1}: {wall:.1f} s, litellm imported: {lite}", flush=True)
    finally:
        server.close()
    print(f"code {args.code}: median fully cached re-run {statistics.median(walls):.1f} s; "
          f"litellm imported in {sum(imported)} of {len(imported)} re-runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

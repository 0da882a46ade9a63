"""CPU, wall time and peak memory of a small first run: prb-judge beside lm-eval's own backend.

Issue 24's setting: ``prb eval --tasks personalized_rb`` on synthetic data with 132 pairs
(264 judgments, both orders), concurrency 32, the fake server answering after 200 ms,
prb-judge's cache off and no prices given (so the price is looked up, as for a user).
The same run with lm-eval's ``local-chat-completions`` (``--apply_chat_template``) is
the reference. Runs are interleaved (prb-judge, reference, prb-judge, ...), each in a
fresh process; CPU (user + system) and peak resident memory come from ``wait4``. At the
end, one more prb-judge run under ``-X importtime`` lists the slowest imports, and
whether litellm was among them.

``--task``, ``--data`` and ``--log-samples`` measure a larger run the same way, e.g. the
suite's full-size profile first run (5,660 judgments, an instant judge; every run gets
an empty cache folder, so each one ranks posts afresh).

    python benchmarks/bench_lean.py                       # 5 runs each
    python benchmarks/bench_lean.py --trials 3 --rows 132 --json /tmp/lean.json
    python benchmarks/bench_lean.py --task personalized_rb_profile --data /tmp/prb-bench/data-1x \
        --latency 0 --concurrency 64 --log-samples --trials 3
    git archive main | tar -x -C /tmp/prb-main && python benchmarks/bench_lean.py --code /tmp/prb-main
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import BENCH, Server, Spread, load, python, run

PUBLISHED_ROWS = 767 + 989 + 1074
BACKENDS = ("prb-judge", "local-chat-completions")


def _model_args(backend: str, url: str, concurrency: int) -> list[str]:
    if backend == "prb-judge":
        return ["--model", "prb-judge", "--model_args",
                f"model=openai/fake,api_base={url}/v1,cache=off,num_concurrent={concurrency}"]
    return ["--model", "local-chat-completions", "--model_args",
            f"model=fake,base_url={url}/v1/chat/completions,num_concurrent={concurrency},"
            "tokenized_requests=False,max_retries=3", "--apply_chat_template"]


def _slowest_imports(stderr: str, top: int = 8) -> list[tuple[str, float]]:
    """Top-level packages by cumulative import time (seconds) from ``-X importtime`` output."""
    totals: dict[str, float] = {}
    for line in stderr.splitlines():
        found = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if found and not found.group(2).strip() and len(found.group(2)) == 1:
            name = found.group(3).split(".")[0]
            totals[name] = totals.get(name, 0.0) + int(found.group(1)) / 1e6
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=132, help="pairs in the synthetic data (2 judgments each)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2, help="server latency per answer, seconds")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--task", default="personalized_rb", help="the task both backends run")
    parser.add_argument("--data", type=Path, help="data folder to use (e.g. the suite's data-1x) instead of "
                                                  "generating --rows pairs")
    parser.add_argument("--log-samples", action="store_true", help="also write the samples files, as the suite's "
                                                                    "full runs do")
    parser.add_argument("--work", type=Path, help="folder for data and outputs (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--code", type=Path, help="another prb checkout to run (e.g. an export of main: before/after)")
    args = parser.parse_args(argv)

    if args.data is not None and not args.data.is_dir():
        parser.error(f"--data {args.data}: no such folder; write one with benchmarks/fullsize_data.py DIR")
    work = args.work or Path(tempfile.mkdtemp(prefix="prb-lean-"))
    data = args.data.resolve() if args.data is not None else work / "data"
    if not data.is_dir():
        run(python(str(BENCH / "fullsize_data.py"), str(data), "--scale", str(args.rows / PUBLISHED_ROWS),
                   "--seed", "0")).check()
    env = {"OPENAI_API_KEY": "sk-bench-not-a-real-key"}
    if args.code is not None:
        env["PYTHONPATH"] = str(args.code.resolve())
    load_before = load()
    measured: dict[str, dict[str, Spread]] = {b: {"cpu": Spread(), "wall": Spread(), "rss": Spread()} for b in BACKENDS}
    judgments = 0
    loads: list[float] = []  # the 1-minute load average after each run
    with Server(args.latency) as server:
        def once(backend: str, extra: tuple[str, ...] = ()) -> Any:
            out, cache = work / "out", work / "prb-cache"
            for folder in (out, cache):  # an empty cache: every run is a first run
                shutil.rmtree(folder, ignore_errors=True)
            server.reset()
            done = run(python(*extra, "-m", "prb_tasks", "eval", *_model_args(backend, server.url, args.concurrency),
                              "--tasks", args.task, "--metadata", json.dumps({"data_dir": str(data)}),
                              "--output_path", str(out), *(["--log_samples"] if args.log_samples else [])),
                       env={**env, "PRB_CACHE_DIR": str(cache)}, cwd=work).check()
            return done, server.stats()["total_requests"]

        for trial in range(args.trials):
            for backend in BACKENDS:  # interleaved: drift in the machine's load hits both alike
                done, sent = once(backend)
                judgments = sent
                measured[backend]["cpu"].add(done.cpu)
                measured[backend]["wall"].add(done.wall)
                measured[backend]["rss"].add(done.peak_rss_mb)
                loads.append(os.getloadavg()[0])
                print(f"trial {trial + 1} {backend:24s} cpu {done.cpu:5.2f} s  wall {done.wall:5.2f} s  "
                      f"peak {done.peak_rss_mb:4.0f} MB  ({sent} requests, load {loads[-1]:.1f})", flush=True)
        traced, _ = once("prb-judge", ("-X", "importtime"))
    imports = _slowest_imports(traced.stderr)
    litellm_loaded = any(re.search(r"\|\s+litellm(\.|$)", line) for line in traced.stderr.splitlines())

    ours, ref = measured["prb-judge"], measured["local-chat-completions"]
    print(f"\n{args.task}: {judgments} judgments, concurrency {args.concurrency}, latency {args.latency:g} s, "
          f"{args.trials} interleaved runs each (median, min-max); load before {load_before}, after {load()}; "
          f"1-minute load after each run {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'':24s} {'CPU s':>18s} {'wall s':>18s} {'peak RSS MB':>18s}")
    for backend in BACKENDS:
        m = measured[backend]
        print(f"{backend:24s} {m['cpu'].text(2):>18s} {m['wall'].text(2):>18s} {m['rss'].text(0):>18s}")
    ratios = {k: ours[k].median / ref[k].median for k in ("cpu", "wall", "rss")}
    print(f"{'ratio prb-judge / ref':24s} {ratios['cpu']:>18.2f} {ratios['wall']:>18.2f} {ratios['rss']:>18.2f}")
    print(f"litellm imported by prb-judge: {'yes' if litellm_loaded else 'no'}; slowest imports (cumulative s): "
          + ", ".join(f"{name} {sec:.2f}" for name, sec in imports))
    if args.json:
        args.json.write_text(json.dumps({
            "task": args.task, "judgments": judgments, "concurrency": args.concurrency, "latency": args.latency,
            "trials": args.trials,
            "load_before": load_before, "load_after_each_run": loads,
            "backends": {b: {k: v.values for k, v in m.items()} for b, m in measured.items()},
            "ratios": ratios, "litellm_imported": litellm_loaded, "slowest_imports": imports,
        }, indent=2))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

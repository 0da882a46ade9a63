"""Peak memory of the scalar path as the data grows: each scorer, both layouts, 1x/2x/4x.

Each run is ``prb eval --model prb-rm`` in a fresh process (score cache off), its peak
resident memory from ``wait4``, on the synthetic full-size data of ``fullsize_data.py``
in the hub's parquet layout and as ``.jsonl`` (the same rows). Scorers:

- ``length``, ``bm25``: ``personalized_rb_scalar``, every pair;
- ``embedding``: ``personalized_rb_scalar``, the first ``--embedding-limit`` pairs per
  subset (every pair takes about 21 min on 2 cores; the data is still loaded whole);
- ``hf``: ``personalized_rb_scalar_profile`` (the question with the user's top posts)
  scored by a tiny random GPT-2 classifier (``prb_tasks.testing.tiny_rm``), every pair.

Layouts ``custom-jsonl`` and ``custom-json`` run the same scorers on a user's own preference
file made of the same rows (``custom_data.py``): ``personalized_custom_scalar`` (``hf``:
``personalized_custom_scalar_history``, the prompt after the user's other preferences).

Runs are interleaved: each trial walks every layout, scorer and scale once (a scorer's
scales one after the other, each right after the baseline's run when there is one), so
a drift in the machine's load hits all alike. The table gives each median and the growth from
the previous scale (the issue's bound: at most 150 MB from 1x to 2x).

    python benchmarks/bench_scalar_memory.py --work /tmp/prb-scalar              # 1x, 2x, 4x, 1 trial
    python benchmarks/bench_scalar_memory.py --scales 1,2 --trials 2 --scorers length,bm25

``--baseline DIR`` also runs another copy of the code (a folder holding a ``prb_tasks``
package, e.g. ``git archive <commit> prb_tasks templates | tar -x -C DIR``) right before
each run of this one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from measure import BENCH, Spread, load, python, run

SCORERS = ("length", "bm25", "embedding", "hf")
LAYOUTS = ("parquet", "jsonl")
#: A user's own preference file (``custom_data.py``: the same rows, five per user), as .jsonl or a .json array.
CUSTOM = {"custom-jsonl": "jsonl", "custom-json": "json"}


def _data(work: Path, layout: str, scale: float) -> Path:
    """The synthetic data at ``scale`` in ``layout`` under ``work`` (generated once, kept)."""
    folder = work / f"{layout}-{scale:g}x"
    if layout in CUSTOM:
        path = folder / f"preferences.{CUSTOM[layout]}"
        if not path.is_file():
            run(python(str(BENCH / "custom_data.py"), str(folder), "--scale", str(scale), "--seed", "0",
                       "--format", CUSTOM[layout])).check()
        return path
    if not (folder / "Society_and_Culture").is_dir():
        run(python(str(BENCH / "fullsize_data.py"), str(folder), "--scale", str(scale), "--seed", "0",
                   "--format", layout)).check()
    return folder


def _command(scorer: str, data: Path, tiny_rm: Path, embedding_limit: int,
             hf_max_length: int | None = None) -> list[str]:
    """The ``prb eval`` command line of one scorer on one copy of the data."""
    custom = data.is_file()
    task, model_args, extra = "personalized_rb_scalar", f"scorer={scorer},cache=off", []
    if scorer == "hf":
        task, model_args = "personalized_rb_scalar_profile", f"scorer=hf,pretrained={tiny_rm},cache=off,device=cpu"
        if hf_max_length is not None:
            model_args += f",max_length={hf_max_length}"
    if custom:  # the bare prompt, or (hf) the prompt after the user's other preferences
        task = "personalized_custom_scalar_history" if scorer == "hf" else "personalized_custom_scalar"
    if scorer == "embedding":
        extra = ["--limit", str(embedding_limit)]
    metadata = {"data_path": str(data)} if custom else {"data_dir": str(data)}
    return python("-m", "prb_tasks", "eval", "--model", "prb-rm", "--model_args", model_args, "--tasks", task,
                  "--metadata", json.dumps(metadata), *extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="1,2,4", help="data sizes, multiples of the published 2,830 rows")
    parser.add_argument("--layouts", default=",".join(LAYOUTS),
                        help=f"any of {', '.join([*LAYOUTS, *CUSTOM])} (custom-*: a user's own preference file)")
    parser.add_argument("--scorers", default=",".join(SCORERS), help=f"any of {', '.join(SCORERS)}")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--embedding-limit", type=int, default=50, help="pairs per subset for scorer=embedding")
    parser.add_argument("--hf-max-length", type=int,
                        help="scorer=hf: cut inputs at this many tokens (default: the tiny RM's 512); less model "
                             "work per pair, the same data read, documents built and inputs tokenized")
    parser.add_argument("--work", type=Path, help="folder for the data (kept) and the tiny RM")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--baseline", type=Path, help="folder holding another prb_tasks package, run interleaved")
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="prb-scalar-"))
    work.mkdir(parents=True, exist_ok=True)
    scales = [float(s) for s in args.scales.split(",")]
    layouts = args.layouts.split(",")
    scorers = args.scorers.split(",")
    tiny_rm = work / "tiny-rm"
    if "hf" in scorers and not tiny_rm.is_dir():
        run(python("-c", "import sys; from pathlib import Path; from prb_tasks.testing.tiny_rm import build_tiny_rm; "
                   "build_tiny_rm(Path(sys.argv[1]))", str(tiny_rm))).check()
    data = {(layout, scale): _data(work, layout, scale) for layout in layouts for scale in scales}
    codes = {"now": None, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    peaks: dict[tuple[str, str, str, float], Spread] = {}
    loads: list[str] = [load()]
    print(f"load before {loads[0]}", flush=True)
    for trial in range(args.trials):
        # A scorer's scales run one after the other: its growth is measured minutes apart.
        for layout in layouts:
            for scorer in scorers:
                for scale in scales:
                    for code, folder in reversed(codes.items()):  # baseline first, then this checkout
                        env = {"PRB_CACHE_DIR": str(work / "cache")}
                        if folder is not None:
                            env["PYTHONPATH"] = os.pathsep.join(
                                [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])
                        shutil.rmtree(work / "cache", ignore_errors=True)
                        command = _command(scorer, data[layout, scale], tiny_rm, args.embedding_limit,
                                           args.hf_max_length)
                        done = run(command, env=env, cwd=work).check()
                        peaks.setdefault((code, layout, scorer, scale), Spread()).add(done.peak_rss_mb)
                        print(f"trial {trial + 1} {code:8s} {layout:7s} {scale:g}x {scorer:9s} peak RSS "
                              f"{done.peak_rss_mb:5.0f} MB  wall {done.wall:6.1f} s  load {load()}", flush=True)
        loads.append(load())
    print(f"\npeak RSS MB, median of {args.trials} interleaved trial(s) (growth from the previous scale); "
          f"load (1/5/15 min) before {loads[0]}, after {loads[-1]}")
    header = ["code", "layout", "scorer", *[f"{s:g}x" for s in scales]]
    print(" | ".join(header))
    for code in codes:
        for layout in layouts:
            for scorer in scorers:
                cells, previous = [], None
                for scale in scales:
                    value = peaks[code, layout, scorer, scale].median
                    growth = f" (+{value - previous:.0f})" if previous is not None else ""
                    cells.append(f"{value:.0f}{growth}")
                    previous = value
                print(" | ".join([code, layout, scorer, *cells]))
    if args.json:
        args.json.write_text(json.dumps({
            "loads": loads, "trials": args.trials, "embedding_limit": args.embedding_limit,
            "hf_max_length": args.hf_max_length,
            "peak_rss_mb": [{"code": c, "layout": lay, "scorer": s, "scale": sc, "values": v.values}
                            for (c, lay, s, sc), v in peaks.items()],
        }, indent=2))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""CPU and peak memory of the length baseline on Community Alignment and PRISM at release size.

For each family, on the synthetic copies of ``real_people_data.py`` (189,234 and 42,609 pairs at
1x), one trial runs, one after the other (so a drift of the machine's load hits all alike):

- ``prb eval --model prb-rm --model_args scorer=length,cache=off --tasks <family>_scalar``;
- ``people_pandas_reference.py``: the same numbers (pairs, acc, tie rate, per-user accuracy) in plain
  pandas; the benchmark stops if prb's differ;
- ``lm_eval_trivial.py`` with as many pairs: lm-eval's own handling of that many two-choice pairs
  (trivial documents, a model that does nothing);

and, once per trial, ``prb eval`` on a copy of a few dozen pairs and ``lm_eval_trivial.py`` with one
pair (their start-up), and ``prb audit`` on the PRISM copy. CPU is user + system seconds of the
child (``wait4``), which a loaded machine inflates far less than wall time; memory is its peak
resident set. A pair's CPU above start-up splits into lm-eval's part (the trivial run's) and prb's
(the rest: reading the file, building documents, scoring, prb's metrics)::

    python benchmarks/bench_real_people_size.py --work /tmp/prb-people --trials 3
    python benchmarks/bench_real_people_size.py --work /tmp/prb-people --scales 2 --trials 1 --no-audit

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import BENCH, Spread, load, python, run

FAMILIES = ("community_alignment", "prism")


def _copy(work: Path, scale: float) -> Path:
    folder = work / f"{scale:g}x"
    if not (folder / "prism" / "metadata.jsonl").is_file():
        run(python(str(BENCH / "real_people_data.py"), str(folder), "--scale", str(scale)), timeout=7200).check()
    return folder


def _prb(family: str, folder: Path, out: Path) -> tuple[Any, dict[str, float]]:
    """One ``prb eval`` run and the numbers it wrote."""
    for old in out.rglob("results_*.json"):
        old.unlink()
    done = run(python("-m", "prb_tasks", "eval", "--model", "prb-rm", "--model_args", "scorer=length,cache=off",
                      "--tasks", f"{family}_scalar", "--metadata", json.dumps({"data_dir": str(folder)}),
                      "--output_path", str(out)), timeout=7200).check()
    scores = json.loads(next(out.rglob("results_*.json")).read_text())["results"][f"{family}_scalar"]
    return done, {"pairs": scores["sample_len"], "acc": scores["acc,none"], "tie_rate": scores["tie_rate,none"],
                  "acc_user": scores["acc_user,none"]}


def _same(family: str, prb: dict[str, float], pandas: dict[str, float]) -> None:
    if prb["pairs"] != pandas["pairs"] or any(abs(prb[k] - pandas[k]) > 1e-12 for k in ("acc", "tie_rate",
                                                                                         "acc_user")):
        raise SystemExit(f"{family}: prb and the pandas script disagree: {prb} vs {pandas}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, help="folder for the copies (kept) and the runs' results")
    parser.add_argument("--scales", default="1", help="copy sizes, multiples of the releases' pairs")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--no-audit", action="store_true", help="leave out prb audit")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="prb-people-"))
    scales = [float(s) for s in args.scales.split(",")]
    families = args.families.split(",")
    copies = {scale: _copy(work, scale) for scale in scales}
    tiny = _copy(work, 0.001)
    spreads: dict[str, Spread] = {}
    counts: dict[str, int] = {}

    def note(name: str, done: Any) -> None:
        spreads.setdefault(f"{name} cpu", Spread()).add(done.cpu)
        spreads.setdefault(f"{name} rss", Spread()).add(done.peak_rss_mb)
        print(f"  {name:<40} cpu {done.cpu:6.1f} s  peak {done.peak_rss_mb:6.0f} MB  wall {done.wall:6.1f} s",
              flush=True)

    loads = [load()]
    print(f"load before {loads[0]}", flush=True)
    for trial in range(args.trials):
        print(f"trial {trial + 1}", flush=True)
        note("prb eval, start-up", _prb("prism", tiny / "prism", work / "out")[0])
        note("lm-eval alone, start-up", run(python(str(BENCH / "lm_eval_trivial.py"), "1")).check())
        for scale, folder in copies.items():
            for family in families:
                done, numbers = _prb(family, folder / family, work / "out")
                note(f"{family} {scale:g}x prb", done)
                ref = run(python(str(BENCH / "people_pandas_reference.py"), family, str(folder / family)),
                          timeout=7200).check()
                note(f"{family} {scale:g}x pandas", ref)
                _same(family, numbers, json.loads(ref.stdout.strip().splitlines()[-1]))
                counts[f"{family} {scale:g}x"] = int(numbers["pairs"])
                note(f"{family} {scale:g}x lm-eval alone",
                     run(python(str(BENCH / "lm_eval_trivial.py"), str(int(numbers["pairs"]))), timeout=7200).check())
            if not args.no_audit:
                note(f"prism {scale:g}x prb audit",
                     run(python("-m", "prb_tasks", "audit", str(folder / "prism")), timeout=7200).check())
        loads.append(load())
        print(f"load {loads[-1]}", flush=True)

    def med(name: str) -> float:
        return spreads[name].median

    print(f"\nmedians of {args.trials} trial(s); load averages (1/5/15 min) along the way: {'; '.join(loads)}")
    print("| run | pairs | CPU s (prb) | CPU s (pandas) | prb / pandas | peak MB (prb) | peak MB (pandas) | "
          "lm-eval alone: CPU s, peak MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    rows: dict[str, Any] = {}
    for key, pairs in counts.items():
        prb, pandas, alone = f"{key} prb", f"{key} pandas", f"{key} lm-eval alone"
        print(f"| {key} | {pairs:,} | {spreads[prb + ' cpu'].text()} | {spreads[pandas + ' cpu'].text()} | "
              f"{med(prb + ' cpu') / med(pandas + ' cpu'):.1f}x | {med(prb + ' rss'):,.0f} | "
              f"{med(pandas + ' rss'):,.0f} | {med(alone + ' cpu'):.1f}, {med(alone + ' rss'):,.0f} |")
        per_pair = (med(prb + " cpu") - med("prb eval, start-up cpu")) / pairs * 1e6
        lm_eval = (med(alone + " cpu") - med("lm-eval alone, start-up cpu")) / pairs * 1e6
        rows[key] = {"pairs": pairs, "prb_us_per_pair": per_pair, "lm_eval_us_per_pair": lm_eval,
                     "prb_own_us_per_pair": per_pair - lm_eval}
    print(f"\nstart-up: prb eval {spreads['prb eval, start-up cpu'].text()} s CPU, lm-eval alone "
          f"{spreads['lm-eval alone, start-up cpu'].text()} s CPU")
    for key, row in rows.items():
        print(f"{key}: a pair costs {row['prb_us_per_pair']:.0f} us of CPU above start-up: lm-eval's own "
              f"{row['lm_eval_us_per_pair']:.0f} us, prb's {row['prb_own_us_per_pair']:.0f} us")
    for scale in scales:
        if f"prism {scale:g}x prb audit cpu" in spreads:
            print(f"prb audit, PRISM {scale:g}x: CPU {spreads[f'prism {scale:g}x prb audit cpu'].text()} s, "
                  f"peak {spreads[f'prism {scale:g}x prb audit rss'].text(0)} MB")
    if args.json:
        args.json.write_text(json.dumps({"loads": loads, "per_pair": rows, "medians": {
            k: statistics.median(v.values) for k, v in spreads.items()},
            "values": {k: v.values for k, v in spreads.items()}}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

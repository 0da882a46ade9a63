"""RewardBench 2 scored by ``prb-rm`` on a synthetic copy in the full-size shape: every response
scored once, and how long the whole run takes.

The copy has the published test split's shape (``allenai/reward-bench-2``, 1,865 rows):
Factuality 475, Precise IF 160, Math 183, Safety 450, Focus 495 best-of-4 rows and 51 Ties
prompts (a ``ref:`` row with 1 correct and 3 incorrect answers, a ``tied:`` row with
``--tied-correct`` correct and 3-5 incorrect ones). Rows are synthetic
(:mod:`prb_tasks.testing.benchmark_copies`); the sizes are what matters. One
``prb eval --model prb-rm --model_args scorer=length --tasks rewardbench2`` (no score cache)
runs, then the same again with ``scorer=hf`` on a tiny random model when ``--hf`` is given.

Checked, not only timed: the responses prb-rm reports scoring equal the responses in the
copy (each scored once: best-of-4 and Ties reuse the rewards, nothing is scored twice).

    python benchmarks/bench_rewardbench2.py [--hf] [--tied-correct 8]

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measure import load, machine, python, run
from prb_tasks.testing.benchmark_copies import rewardbench2_rows, write_rewardbench2

#: Rows per best-of-N subset of the published test split.
SIZES = {"Factuality": 475, "Precise IF": 160, "Math": 183, "Safety": 450, "Focus": 495}
TIE_PROMPTS = 51


def full_size_rows(tied_correct: int) -> list[dict]:
    """The published split's shape: best-of-4 rows per subset as in :data:`SIZES`, 51 Ties pairs."""
    rows = rewardbench2_rows(per_subset=max(SIZES.values()), tie_prompts=TIE_PROMPTS, seed=7,
                             tied_correct=tied_correct)
    kept: list[dict] = []
    seen = {s: 0 for s in SIZES}
    for row in rows:
        if row["subset"] in SIZES:
            if seen[row["subset"]] >= SIZES[row["subset"]]:
                continue
            seen[row["subset"]] += 1
        kept.append(row)
    return kept


def measure(folder: Path, model_args: str, responses: int) -> dict:
    out = folder / f"out-{re.sub(r'[^A-Za-z0-9]+', '_', model_args)[:40]}"
    done = run(python("-m", "prb_tasks", "eval", "--model", "prb-rm", "--model_args", f"{model_args},cache=off",
                      "--tasks", "rewardbench2", "--metadata", json.dumps({"data_dir": str(folder / "rb2")}),
                      "--output_path", str(out)), cwd=folder).check()
    said = re.search(r"prb-rm \([^)]*\): (\d+) responses \((\d+) documents\) in ([\d.]+) s", done.stderr)
    if said is None:
        raise SystemExit("no prb-rm summary line in the run's output")
    scored = int(said.group(1))
    if scored != responses:
        raise SystemExit(f"prb-rm scored {scored} responses, the copy holds {responses}: some were scored twice")
    results = json.loads(next(out.rglob("results_*.json")).read_text(encoding="utf-8"))
    return {"model_args": model_args, "responses_scored": scored, "documents": int(said.group(2)),
            "scoring_s": float(said.group(3)), "wall_s": round(done.wall, 1), "peak_rss_mb": round(done.peak_rss_mb),
            "score": results["results"]["rewardbench2"]["score,none"], "load": load()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hf", action="store_true", help="also score with a tiny random HF model (scorer=hf)")
    parser.add_argument("--tied-correct", type=int, default=8, help="correct answers per tied: row (default 8)")
    args = parser.parse_args()
    rows = full_size_rows(args.tied_correct)
    responses = sum(len(r["chosen"]) + len(r["rejected"]) for r in rows)
    report = {"machine": machine(), "rows": len(rows), "responses": responses, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_rewardbench2(folder / "rb2", rows)
        report["runs"].append(measure(folder, "scorer=length", responses))
        if args.hf:
            from prb_tasks.testing.tiny_rm import build_tiny_rm

            tiny = build_tiny_rm(folder / "tiny", "gpt2", seed=1)
            report["runs"].append(measure(folder, f"pretrained={tiny}", responses))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

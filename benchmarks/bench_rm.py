"""Throughput of ``prb-rm``'s HF scorer: length-sorted batches vs one response at a time.

Scores the bundled sample's responses (all three subsets, 72 responses = 36 pairs,
repeated ``--repeat`` times) with a tiny random sequence classifier built on the
fly (or ``--model PATH``), calling the scorer directly: no score cache, no lm-eval.
Prints pairs per second for each setting and the largest score difference between
settings (batching must not change scores).

    python benchmarks/bench_rm.py                      # CPU, tiny GPT-2, batch 1 vs 16
    python benchmarks/bench_rm.py --device cuda        # the same on a GPU
    python benchmarks/bench_rm.py --arch llama --hidden 256 --layers 4 --batch-sizes 1,8,32

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def _items(repeat: int):
    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.documents.personalized_rb import build_docs
    from prb_tasks.rm.inputs import RMInput

    docs = [d for s in SUBSETS for d in build_docs(s.config, "scalar", source="sample")]
    once = [RMInput(d["prompt"], c, d["profile_key"], d["question"]) for d in docs for c in d["choices"]]
    return once * repeat


def _in_given_order(lengths, batch_size):
    # Same batch size, no sorting: shows what sorting by length saves in padding.
    return [list(range(s, min(s + batch_size, len(lengths)))) for s in range(0, len(lengths), batch_size)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, mps or auto")
    parser.add_argument("--dtype", default="float32", help="auto, float32, bfloat16 or float16")
    parser.add_argument("--arch", default="gpt2", choices=["gpt2", "llama"])
    parser.add_argument("--hidden", type=int, default=32, help="hidden size of the tiny model")
    parser.add_argument("--layers", type=int, default=2, help="layers of the tiny model")
    parser.add_argument("--model", help="score with this model folder or hub id instead of a tiny one")
    parser.add_argument("--repeat", type=int, default=8, help="copies of the 72 sample responses")
    parser.add_argument("--batch-sizes", default="1,16", help="comma-separated batch sizes")
    parser.add_argument("--no-unsorted", action="store_true", help="skip the unsorted-batches comparison")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch CPU threads (0: torch's default); 1 gives steadier numbers on a shared machine")
    parser.add_argument("--trials", type=int, default=3,
                        help="timed passes per setting; the best and the median are reported (other "
                             "processes on a shared machine make single timings noisy)")
    args = parser.parse_args()

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    import prb_tasks.rm.scorers.hf as hf_module
    from prb_tasks.rm.options import parse_options
    from prb_tasks.testing.tiny_rm import build_tiny_rm

    folder = args.model
    if folder is None:
        folder = str(build_tiny_rm(Path(tempfile.mkdtemp(prefix="prb-bench-")), args.arch,
                                   hidden=args.hidden, layers=args.layers))
    items = _items(args.repeat)
    sizes = [int(x) for x in args.batch_sizes.split(",")]
    runs: list[tuple[str, int, bool]] = [("sorted", b, True) for b in sizes]
    if not args.no_unsorted:
        runs += [("unsorted", b, False) for b in sizes if b > 1]

    sorted_batches = hf_module.sorted_batches
    reference = None
    rows = []
    for label, batch_size, use_sorting in runs:
        hf_module.sorted_batches = sorted_batches if use_sorting else _in_given_order
        scorer = hf_module.HFScorer(parse_options({"pretrained": folder, "device": args.device, "dtype": args.dtype,
                                                   "batch_size": batch_size}))
        scorer.score(items[:batch_size])  # warm-up (kernels, allocator)
        times = []
        for _ in range(max(args.trials, 1)):
            started = time.perf_counter()
            scores = scorer.score(items)
            times.append(time.perf_counter() - started)
        best, median = min(times), statistics.median(times)
        reference = reference or scores
        diff = max(abs(a - b) for a, b in zip(scores, reference))
        rows.append({"batching": label, "batch_size": batch_size, "responses": len(items),
                     "best_s": round(best, 3), "median_s": round(median, 3),
                     "pairs_per_s_best": round(len(items) / 2 / best, 1),
                     "pairs_per_s_median": round(len(items) / 2 / median, 1),
                     "max_abs_diff_vs_first": diff})
    hf_module.sorted_batches = sorted_batches

    print(f"model={folder} device={scorer.device} dtype={str(scorer.dtype).replace('torch.', '')} "
          f"torch={torch.__version__} threads={torch.get_num_threads()} responses={len(items)}")
    print(f"{'batching':<9} {'batch':>5} {'best s':>7} {'pairs/s best':>13} {'pairs/s median':>15} {'max|diff|':>10}")
    for row in rows:
        print(f"{row['batching']:<9} {row['batch_size']:>5} {row['best_s']:>7.2f} {row['pairs_per_s_best']:>13.1f} "
              f"{row['pairs_per_s_median']:>15.1f} {row['max_abs_diff_vs_first']:>10.1e}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()

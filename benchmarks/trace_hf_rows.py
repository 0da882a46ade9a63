"""Python heap held per row when the hf scorer's forward passes start, by tracemalloc.

Builds the ``personalized_rb_scalar_profile`` documents of a data copy and scores them
with a tiny RM in this process, reading the traced memory after the documents are built
and at the first forward pass (after a garbage collection). Run it on two slices of the
synthetic data (``fullsize_data.py --scale 0.05`` and ``0.1``): the growth between them,
per row, is what a run holds per row of data, free of one-time costs such as imports.
Another copy of the code is measured by putting it first on ``PYTHONPATH``.

    python benchmarks/trace_hf_rows.py DATA_DIR TINY_RM_DIR [--max-length N]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", help="a data copy in the HF layout")
    parser.add_argument("tiny_rm", help="a folder written by prb_tasks.testing.tiny_rm.build_tiny_rm")
    parser.add_argument("--max-length", type=int, help="cut inputs at this many tokens (default: the model's)")
    args = parser.parse_args(argv)

    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.documents.personalized_rb import build_docs
    from prb_tasks.rm.inputs import RMInput
    from prb_tasks.rm.options import parse_options
    from prb_tasks.rm.scorers.hf import HFScorer

    options = {"pretrained": args.tiny_rm, "device": "cpu", "dtype": "float32"}
    if args.max_length is not None:
        options["max_length"] = str(args.max_length)
    scorer = HFScorer(parse_options(options))
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    docs = [doc for subset in SUBSETS for doc in build_docs(subset.config, "scalar_profile", data_dir=args.data)]
    gc.collect()
    after_docs = tracemalloc.get_traced_memory()[0]
    items = [RMInput(d["prompt"], c, d["profile_key"], d["question"]) for d in docs for c in d["choices"]]
    at_forward: list[int] = []
    forward = HFScorer._forward

    def traced(self: HFScorer, batch: list) -> list:
        if not at_forward:
            gc.collect()
            at_forward.append(tracemalloc.get_traced_memory()[0])
        return forward(self, batch)

    HFScorer._forward = traced  # type: ignore[method-assign]
    scorer.score(items)
    print(f"rows {len(docs)}: after the documents {(after_docs - base) / 1e6:.2f} MB, at the first forward "
          f"pass {(at_forward[0] - base) / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

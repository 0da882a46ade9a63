"""Time to read a Community Alignment-sized copy and build each task variant's documents.

Writes a synthetic copy in the hub layout (``data/filtered_community_alignment.csv``) with
``--annotators`` people of ``--conversations`` conversations each (the card: median 26), two
turns of four responses, then times the reader and ``build_docs`` of every variant (the
profile variants render a leave-one-out history for every pair)::

    python benchmarks/bench_real_people.py --annotators 300 --conversations 26

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    """Write the copy, read it, build every variant; print one line per step."""
    from prb_tasks.data.community_alignment.reader import read_community
    from prb_tasks.documents import community_alignment
    from prb_tasks.documents.people import VARIANTS
    from tests.community_alignment_fixture import ca_row, write_ca

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=300)
    parser.add_argument("--conversations", type=int, default=26)
    args = parser.parse_args()
    answers = {x: f"Answer {x}: " + "a sentence of a typical length for an answer. " * 8 for x in "abcd"}
    rows = [ca_row(a * 1000 + c, a, "fr", [(f"Question {c % 50} about topic {c}", answers, "abcd"[(a + c) % 4],
                                            "because" if c % 2 else ""),
                                           (f"Follow-up {c}", answers, "abcd"[a % 4], "")], country="France")
            for a in range(args.annotators) for c in range(args.conversations)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_ca(Path(tmp), rows)
        start = time.perf_counter()
        copy = read_community(folder / "data" / "filtered_community_alignment.csv")
        pairs = sum(len(p.choices) for p in copy.people)
        print(f"read {len(rows)} conversations, {pairs} pairs: {time.perf_counter() - start:.1f} s")
        for variant in VARIANTS:
            start = time.perf_counter()
            docs = community_alignment.build_docs(variant, data_dir=str(folder))
            print(f"{variant:<15} {len(docs):>7} documents: {time.perf_counter() - start:.1f} s")
    print(f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()

"""What a scalar task of real people holds per pair once its documents are built, split by owner.

In one process, under ``tracemalloc``, the family's ``load_dataset(variant="scalar")`` reads a
copy written by ``real_people_data.py`` and builds its documents, as ``prb eval`` does before
lm-eval takes them. Then, divided by the pairs:

- ``held``: the Python memory still held (the pairs read, the documents, the prompt and profile
  stores, the data's texts);
- ``texts``: the data's own texts among it, each string object once (each request and answer the
  documents point at): what any program holding the data in memory holds;
- ``prb``: ``held`` less ``texts``: prb's bookkeeping around the texts;
- ``continuations``: the strings lm-eval will make from the documents, ``" " + answer`` for each of
  a pair's two requests (lm-eval's ``target_delimiter`` joined to each choice; computed here, not
  held): memory a run has on top of lm-eval's own requests, whoever builds the documents;

and ``held`` by the source file that allocated it (the largest few). Python objects only: the
peak resident set of a whole run is ``bench_real_people_size.py``'s::

    python benchmarks/people_memory_split.py /tmp/prb-people/1x
    python benchmarks/people_memory_split.py /tmp/prb-people/1x --families prism

Not a test: it prints, the reader compares.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from prb_tasks.prompts.prompt_store import doc_prompt


def _texts(docs: list[dict[str, Any]]) -> int:
    """Bytes of the distinct string objects the documents' requests and answers are."""
    seen: dict[int, int] = {}
    for doc in docs:
        for text in (doc["question"], doc_prompt(doc), *doc["choices"]):
            if id(text) not in seen:
                seen[id(text)] = sys.getsizeof(text)
    return sum(seen.values())


def split(family: str, folder: Path, top: int) -> dict[str, Any]:
    """The per-pair split of one family's scalar documents on the copy in ``folder``."""
    module = importlib.import_module(f"prb_tasks.documents.{family}")
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    docs = module.load_dataset(variant="scalar", data_dir=str(folder))["test"]
    held, peak = tracemalloc.get_traced_memory()
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    pairs = len(docs)
    held -= before
    texts = _texts(docs)
    continuations = sum(sys.getsizeof(" " + choice) for doc in docs for choice in doc["choices"])
    by_file = [(str(stat.traceback[0].filename).split("site-packages/")[-1].split("/prb_tasks/")[-1], stat.size)
               for stat in snapshot.statistics("filename")[:top]]
    per = 1 / pairs
    return {"family": family, "pairs": pairs, "held_MB": held / 1e6, "peak_MB": (peak - before) / 1e6,
            "held_B_per_pair": held * per, "texts_B_per_pair": texts * per,
            "prb_B_per_pair": (held - texts) * per, "continuations_B_per_pair": continuations * per,
            "continuations_MB": continuations / 1e6, "texts_MB": texts / 1e6,
            "by_file_B_per_pair": {name: round(size * per) for name, size in by_file}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("copy", type=Path, help="a folder written by real_people_data.py")
    parser.add_argument("--families", default="community_alignment,prism")
    parser.add_argument("--top", type=int, default=8, help="source files listed")
    args = parser.parse_args(argv)
    for family in args.families.split(","):
        row = split(family, args.copy / family, args.top)
        print(f"{family}: {row['pairs']:,} pairs; held {row['held_MB']:,.0f} MB ({row['held_B_per_pair']:,.0f} B a "
              f"pair): the data's texts {row['texts_B_per_pair']:,.0f} B ({row['texts_MB']:,.0f} MB), prb's "
              f"{row['prb_B_per_pair']:,.0f} B; lm-eval's continuations will add "
              f"{row['continuations_B_per_pair']:,.0f} B a pair ({row['continuations_MB']:,.0f} MB)")
        for name, size in row["by_file_B_per_pair"].items():
            print(f"  {size:7,} B a pair  {name}")
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())

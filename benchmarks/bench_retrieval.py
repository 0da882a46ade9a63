"""Time post retrieval for the profile-aware tasks on full-size data.

The real benchmark cannot be downloaded here, so this script writes synthetic rows of
the real size: 2,830 rows (767 / 989 / 1,074 per subset) whose profiles hold 20-200
posts and about 90 KB of text each, built from the words of the bundled sample.
(Written for this benchmark; a shared full-size generator, benchmarks/fullsize_data.py,
is being written separately and can replace ``write_rows`` when it lands.)

Measured, each on an empty cache:

- ``bm25``: ranking every post of every row (all 2,830 rows), then again from the
  on-disk ranking cache;
- ``embedding``: dense ranking (all-MiniLM-L6-v2, mean-pooled dot product) of the first
  ``--dense-rows`` rows per run, timed per text and extrapolated to all rows (pass
  ``--dense-rows 2830`` to time everything: hours on a 2-core CPU);
- the same dense rows again from the on-disk ranking cache in a fresh process state
  (what every later run pays), per row and extrapolated;
- for scale: loading and validating the 2,830 rows, which every profile-aware run pays.

Run: ``python benchmarks/bench_retrieval.py [--dense-rows 60] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import tempfile
import time
from pathlib import Path

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.resources import sample_dir

FILE = "test-00000-of-00001.jsonl"


def _vocabulary() -> list[str]:
    words: list[str] = []
    for path in sorted(sample_dir().glob(f"*/{FILE}")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts = [row["question"], row["chosen"], row["rejected"], *(p["text"] for p in row["profile"])]
            for text in texts:
                words += re.findall(r"[A-Za-z']+", text)
    return words  # with repeats: sampling from it follows the sample's word frequencies


def _text(rng: random.Random, words: list[str], chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 22)))
        out.append(sentence[0].upper() + sentence[1:] + ".")
        size += len(sentence) + 2
    return " ".join(out)


def write_rows(root: Path, seed: int = 0, profile_kb: float = 85.0) -> int:
    """Write full-size synthetic rows in the HF layout under ``root``; return the row count."""
    rng = random.Random(seed)
    words = _vocabulary()
    total = 0
    for subset in SUBSETS:
        folder = root / subset.config
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / FILE).open("w", encoding="utf-8") as handle:
            for n in range(subset.expected_rows or 0):
                posts = rng.randint(20, 200)
                # Post lengths vary around the mean that gives ~90 KB per profile.
                mean = profile_kb * 1000 / posts
                profile = [
                    {"category": rng.choice(["Books", "Travel", "Music", "Money", "Health", "Work"]),
                     "id": f"{subset.short}-{n}-p{i}",
                     "text": _text(rng, words, max(40, int(rng.uniform(0.3, 1.7) * mean)))}
                    for i in range(posts)
                ]
                row = {
                    "id": f"{subset.short}-{n}",
                    "question": _text(rng, words, rng.randint(80, 300)),
                    "category": "Synthetic",
                    "profile": profile,
                    "rubric_aspects": [{"aspect": _text(rng, words, 60), "evidence": "e", "reason": "r"}],
                    "narrative": "n",
                    "chosen": _text(rng, words, 500),
                    "rejected": _text(rng, words, 480),
                }
                handle.write(json.dumps(row) + "\n")
                total += 1
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dense-rows", type=int, default=60, help="rows ranked densely (cold and warm)")
    parser.add_argument("--keep", type=Path, help="write (or reuse) the synthetic data here")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()

    data = args.keep or Path(tempfile.mkdtemp(prefix="prb-fullsize-"))
    cache = Path(tempfile.mkdtemp(prefix="prb-bench-cache-"))
    os.environ["PRB_CACHE_DIR"] = str(cache)
    try:
        if not (data / SUBSETS[0].config / FILE).is_file():
            started = time.perf_counter()
            count = write_rows(data)
            print(f"wrote {count} synthetic rows to {data} in {time.perf_counter() - started:.1f}s")

        from prb_tasks.data.personalized_rb.sources import load_rows
        from prb_tasks.prompts import rank_cache
        from prb_tasks.prompts.retrieval import rank_profiles

        started = time.perf_counter()
        rows = [row for subset in SUBSETS for row in load_rows(subset, str(data))]
        load_s = time.perf_counter() - started
        queries = [(row.question, [p.text for p in row.profile]) for row in rows]
        posts = sum(len(p) for _, p in queries)
        size_mb = sum(len(t) for _, p in queries for t in p) / 1e6
        print(f"{len(rows)} rows, {posts:,} posts, {size_mb:.0f} MB of post text "
              f"({size_mb * 1000 / len(rows):.0f} KB per profile); load + validate: {load_s:.1f}s")

        started = time.perf_counter()
        rank_profiles(queries, "bm25")
        bm25_s = time.perf_counter() - started
        print(f"bm25, all {len(rows)} rows, cold: {bm25_s:.1f}s ({1000 * bm25_s / len(rows):.1f} ms per row)")
        rank_cache._CACHES.clear()  # a fresh process: only the disk cache is left
        started = time.perf_counter()
        rank_profiles(queries, "bm25")
        print(f"bm25, all {len(rows)} rows, from the disk cache: {time.perf_counter() - started:.1f}s")

        subset = queries[: args.dense_rows]
        texts = sum(len(p) + 1 for _, p in subset)
        from prb_tasks.text.encoder import shared_encoder

        started = time.perf_counter()
        encoder = shared_encoder(args.device)
        print(f"encoder load: {time.perf_counter() - started:.1f}s on {encoder.device}")
        started, cpu_started = time.perf_counter(), time.process_time()
        rank_profiles(subset, "embedding", args.device, progress=False)
        dense_s, dense_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        total_texts = posts + len(rows)
        print(f"embedding, first {len(subset)} rows ({texts:,} texts), cold: {dense_s:.1f}s wall "
              f"({texts / dense_s:.1f} texts/s), {dense_cpu:.1f} CPU-s ({1000 * dense_cpu / texts:.0f} CPU-ms "
              f"per text); all {len(rows)} rows extrapolated: {dense_s / texts * total_texts / 60:.0f} min wall, "
              f"{dense_cpu / texts * total_texts / 3600:.1f} CPU-hours")

        rank_cache._CACHES.clear()  # a fresh process: only the disk cache is left
        started = time.perf_counter()
        rank_profiles(subset, "embedding", args.device, progress=False)
        warm_s = time.perf_counter() - started
        print(f"embedding, same rows from the disk cache: {warm_s:.2f}s "
              f"({1000 * warm_s / len(subset):.2f} ms per row; all {len(rows)} rows: "
              f"{warm_s / len(subset) * len(rows):.1f}s)")
        print(f"encoder work: {encoder.stats.calls} calls, {encoder.stats.texts:,} texts")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()

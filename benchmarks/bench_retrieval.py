"""Time post retrieval for the profile-aware tasks on full-size data.

The real benchmark cannot be downloaded here, so this script uses the full-size
synthetic data of ``fullsize_data.py``: 2,830 rows (767 / 989 / 1,074 per subset) whose
profiles hold 20-200 posts and about 90 KB of text each.

Measured, each on an empty cache:

- ``bm25``: ranking every post of every row (all 2,830 rows), then again from the
  on-disk ranking cache;
- ``embedding``: dense ranking (all-MiniLM-L6-v2, mean-pooled dot product) of the first
  ``--dense-rows`` rows per run, timed per text and extrapolated to all rows (pass
  ``--dense-rows 2830`` to time everything: hours on a 2-core CPU);
- the same dense rows again from the on-disk ranking cache in a fresh process state
  (what every later run pays), per row and extrapolated;
- for scale: loading and validating the 2,830 rows, which every profile-aware run pays;
- with ``--compare-dtype bfloat16``: the same dense rows again in that precision, its CPU
  time per text against float32's, and on how many rows the top-5 *set* of posts is the
  same as float32's (rows drawn evenly from all three subsets);
- with ``--speed-trials N``: the encoder as it was before length-bucketed batching
  (float32, 256 texts per call in batches of 64) against today's settings in float32 and
  in each ``--speed-dtypes`` precision, run interleaved N times on the same dense rows
  without any cache (wall texts/s and CPU-ms per text, medians), and the rows whose top-5
  post set equals the old float32's; with ``--speed-backends openvino`` also the OpenVINO
  backend in float32 and each of those precisions; with ``--agree-rows N`` the top-5
  agreement is counted on N rows (embedded once per setup, untimed) instead of the timed ones.

Run: ``python benchmarks/bench_retrieval.py [--dense-rows 60] [--keep DIR] [--compare-dtype bfloat16]``,
``python benchmarks/bench_retrieval.py --dense-rows 24 --speed-trials 3 --speed-dtypes bfloat16 --keep DIR``,
``... --speed-backends openvino --agree-rows 60`` (needs the ``embed-fast`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from prb_tasks.data.personalized_rb.subsets import SUBSETS

HERE = Path(__file__).resolve().parent


def write_rows(root: Path, seed: int = 0) -> int:
    """Full-size synthetic rows in the HF layout under ``root`` (``fullsize_data.py``); the row count."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    from fullsize_data import generate

    generate(root, seed=seed)
    return sum(subset.expected_rows or 0 for subset in SUBSETS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dense-rows", type=int, default=60, help="rows ranked densely (cold and warm)")
    parser.add_argument("--keep", type=Path, help="write (or reuse) the synthetic data here")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16", "auto"),
                        help="dense precision")
    parser.add_argument("--compare-dtype", choices=("bfloat16", "float16"),
                        help="also rank the dense rows in this precision and compare with float32")
    parser.add_argument("--speed-trials", type=int, default=0,
                        help="time the old and current encoder settings interleaved this many times (no cache)")
    parser.add_argument("--speed-dtypes", default="bfloat16",
                        help="comma-separated precisions timed with the current settings besides float32")
    parser.add_argument("--speed-backends", default="",
                        help="comma-separated encoder backends timed besides torch (openvino)")
    parser.add_argument("--agree-rows", type=int, default=0,
                        help="with --speed-trials: count top-5 agreement on this many rows (default: the timed ones)")
    parser.add_argument("--json", type=Path, help="with --speed-trials: also write its results here")
    args = parser.parse_args()

    data = args.keep or Path(tempfile.mkdtemp(prefix="prb-fullsize-"))
    cache = Path(tempfile.mkdtemp(prefix="prb-bench-cache-"))
    os.environ["PRB_CACHE_DIR"] = str(cache)
    try:
        if not (data / SUBSETS[0].config).is_dir():
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

        # Every k-th row, so all three subsets (and their post lengths) are represented.
        step = max(1, len(queries) // max(args.dense_rows, 1))
        subset = queries[::step][: args.dense_rows]
        if args.speed_trials:
            agree = queries[::max(1, len(queries) // args.agree_rows)][: args.agree_rows] if args.agree_rows else None
            result = _compare_speed(subset, args.device, args.speed_trials, args.speed_dtypes.split(","),
                                    [b for b in args.speed_backends.split(",") if b], agree)
            if args.json:
                args.json.write_text(json.dumps(result, indent=2))
            return
        texts = sum(len(p) + 1 for _, p in subset)
        from prb_tasks.text.encoder import shared_encoder

        started = time.perf_counter()
        encoder = shared_encoder(args.device)
        print(f"encoder load: {time.perf_counter() - started:.1f}s on {encoder.device}")
        started, cpu_started = time.perf_counter(), time.process_time()
        rank_profiles(subset, "embedding", args.device, progress=False, dtype=args.dtype)
        dense_s, dense_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        total_texts = posts + len(rows)
        print(f"embedding ({args.dtype}), first {len(subset)} rows ({texts:,} texts), cold: {dense_s:.1f}s wall "
              f"({texts / dense_s:.1f} texts/s), {dense_cpu:.1f} CPU-s ({1000 * dense_cpu / texts:.0f} CPU-ms "
              f"per text); all {len(rows)} rows extrapolated: {dense_s / texts * total_texts / 60:.0f} min wall, "
              f"{dense_cpu / texts * total_texts / 3600:.1f} CPU-hours")

        rank_cache._CACHES.clear()  # a fresh process: only the disk cache is left
        started = time.perf_counter()
        rank_profiles(subset, "embedding", args.device, progress=False, dtype=args.dtype)
        warm_s = time.perf_counter() - started
        print(f"embedding, same rows from the disk cache: {warm_s:.2f}s "
              f"({1000 * warm_s / len(subset):.2f} ms per row; all {len(rows)} rows: "
              f"{warm_s / len(subset) * len(rows):.1f}s)")
        print(f"encoder work: {encoder.stats.calls} calls, {encoder.stats.texts:,} texts")
        if args.compare_dtype:
            _compare_precision(subset, args.device, args.dtype, args.compare_dtype, dense_cpu / texts)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(data, ignore_errors=True)


def _compare_precision(subset: list, device: str, base: str, other: str, base_cpu_per_text: float) -> None:
    """Rank ``subset`` again in ``other`` precision; print its speed-up and top-5 agreement."""
    from prb_tasks.prompts.retrieval import rank_profiles

    texts = sum(len(p) + 1 for _, p in subset)
    reference = rank_profiles(subset, "embedding", device, progress=False, dtype=base)  # from the cache
    started, cpu_started = time.perf_counter(), time.process_time()
    ranked = rank_profiles(subset, "embedding", device, progress=False, dtype=other)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    same5 = sum(set(a[:5]) == set(b[:5]) for a, b in zip(reference, ranked))
    same10 = sum(set(a[:10]) == set(b[:10]) for a, b in zip(reference, ranked))
    print(f"embedding ({other}), same {len(subset)} rows: {wall:.1f}s wall ({texts / wall:.1f} texts/s), "
          f"{1000 * cpu / texts:.0f} CPU-ms per text = {base_cpu_per_text * texts / cpu:.2f}x {base}'s throughput "
          f"per CPU-second; top-5 post sets equal to {base}'s on {same5}/{len(subset)} rows "
          f"({same5 / len(subset):.0%}), top-10 on {same10}/{len(subset)}")


def _compare_speed(subset: list, device: str, trials: int, dtypes: list[str], backends: list[str] | None = None,
                   agree: list | None = None) -> dict:
    """Time the encoder's old settings against today's, interleaved, and compare top-5 sets;
    returns, per setup, the wall and CPU seconds of each trial and the rows agreeing.

    Args:
        subset: the dense rows (question, post texts).
        device: where the encoder runs.
        trials: interleaved rounds; medians are reported.
        dtypes: precisions timed with today's settings besides float32.
        backends: encoder backends timed besides torch, in float32 and each of ``dtypes``.
        agree: rows on which top-5 agreement with before's is counted (default: ``subset``).
    """
    import statistics

    from prb_tasks.prompts.dense import CHUNK_TEXTS, rank_dense
    from prb_tasks.text.encoder import SentenceEncoder

    texts = sum(len(p) + 1 for _, p in subset)
    # Before: 256 texts per encoder call (sorted by length inside it), batches of 64.
    old = SentenceEncoder(device, batch_size=64)
    new = SentenceEncoder(device)
    chunk = CHUNK_TEXTS["cpu" if new.device == "cpu" else "gpu"]
    setups = {"before: float32, 256 per call, batches of 64": (old, 256, "float32")}
    for dtype in ["float32", *dtypes]:
        setups[f"now: {dtype}, {chunk} per call, batches of {new.batch_size}"] = (new, chunk, dtype)
    for backend in backends or []:
        other = SentenceEncoder(device, backend=backend)
        for dtype in ["float32", *dtypes]:
            setups[f"{backend}: {dtype}, {chunk} per call, batches of {other.batch_size}"] = (other, chunk, dtype)
    walls: dict[str, list[float]] = {name: [] for name in setups}
    cpus: dict[str, list[float]] = {name: [] for name in setups}
    rankings: dict[str, list[list[int]]] = {}
    for encoder, _, dtype in setups.values():  # warm-up: first-call costs (kernel set-up) out of the timings
        rank_dense(subset[:1], encoder, progress=False, dtype=dtype)
    for trial in range(trials):
        for name, (encoder, chunk_texts, dtype) in setups.items():
            started, cpu_started = time.perf_counter(), time.process_time()
            rankings[name] = rank_dense(subset, encoder, chunk_texts=chunk_texts, progress=False, dtype=dtype)
            walls[name].append(time.perf_counter() - started)
            cpus[name].append(time.process_time() - cpu_started)
            print(f"  trial {trial + 1}: {name}: {texts / walls[name][-1]:.1f} texts/s, "
                  f"{1000 * cpus[name][-1] / texts:.0f} CPU-ms per text", flush=True)
    base = next(iter(setups))
    if agree is not None:  # agreement on more rows than were timed: each setup embeds them once
        for name, (encoder, chunk_texts, dtype) in setups.items():
            print(f"  agreement rows: {name}", flush=True)
            rankings[name] = rank_dense(agree, encoder, chunk_texts=chunk_texts, progress=False, dtype=dtype)
    agree_rows = len(agree if agree is not None else subset)
    print(f"\n{len(subset)} rows, {texts:,} texts, {trials} interleaved trial(s), medians "
          f"(speed-up against '{base}'); top-5 agreement on {agree_rows} rows:")
    result: dict = {"rows": len(subset), "texts": texts, "trials": trials, "before": base, "agree_rows": agree_rows,
                    "setups": {}}
    for name in setups:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        same5 = sum(set(a[:5]) == set(b[:5]) for a, b in zip(rankings[base], rankings[name]))
        result["setups"][name] = {"wall_s": walls[name], "cpu_s": cpus[name], "same_top5": same5}
        print(f"  {name}: {texts / wall:.1f} texts/s ({statistics.median(walls[base]) / wall:.2f}x wall), "
              f"{1000 * cpu / texts:.1f} CPU-ms per text ({statistics.median(cpus[base]) / cpu:.2f}x per "
              f"CPU-second); top-5 set equal to before's on {same5}/{agree_rows} rows")
    return result


if __name__ == "__main__":
    main()

"""Full-size synthetic Personalized RewardBench data, for benchmarks only (not shipped).

Writes the three subsets in the HF repo layout (``DIR/<config>/test-00000-of-00001.parquet``,
or ``.jsonl``) with the published row counts (767 / 989 / 1,074; ``--scale`` multiplies
them) and the dataset's schema. What matters for speed follows the real data:

- profiles of 20-200 posts whose sizes have a long tail, about 90 KB per row on
  average (each user has a personal verbosity; posts are log-normal in length);
- chosen and rejected answers of about 100 words (80-115), different texts;
- 2-4 rubric aspects, a narrative, a question of 12-30 words.

The text is random English-like word salad over a shared vocabulary plus topic words,
so tokenizers, BM25 and embedding models see realistic lengths and vocabulary. It is
deterministic: the same ``--seed`` gives byte-identical files.

    python benchmarks/fullsize_data.py /tmp/prb-fullsize             # 2,830 rows, ~250 MB
    python benchmarks/fullsize_data.py /tmp/prb-2x --scale 2 --format jsonl

Not a test and not benchmark data: its numbers say nothing about any model.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from pathlib import Path
from typing import Any

FILE = "test-00000-of-00001"
SUBSETS = {
    "Art_and_Entertainment": ("art", 767, ["Photography", "Music", "Movies", "Writing", "Painting", "Gaming"]),
    "Lifestyle_and_Personal_Development": ("lifestyle", 989,
                                           ["Fitness", "Cooking", "Personal Finance", "Travel", "Parenting",
                                            "Productivity"]),
    "Society_and_Culture": ("society", 1074, ["History", "Politics", "Religion", "Language", "Law", "Education"]),
}

# Common English words: most of any post is made of these.
_COMMON = """the of and to a in is it that for you was with on as have be at this but not are or
from they by we an my one all would there their what so up out if about who get which go me when
make can like time no just him know take people into year your good some could them see other than
then now look only come its over think also back after use two how our work first well way even new
want because any these give day most us really very much still last never before should through
always something while both around tried thought found need feel week month since again already
little long great small right old big high different place home keep start might next every early
often maybe though pretty usually actually ended bit lot less more enough best better idea""".split()

_TOPIC = {
    "Photography": "camera lens shutter exposure aperture tripod portrait landscape film sensor prime zoom light",
    "Music": "guitar chord piano melody rhythm band album concert practice scale drum vocal song",
    "Movies": "film director scene actor screenplay cinema trailer sequel genre festival plot character",
    "Writing": "novel draft chapter editor plot character outline poem manuscript story publish prose",
    "Painting": "canvas brush acrylic watercolor palette sketch color oil gallery stroke pigment easel",
    "Gaming": "console controller level quest multiplayer strategy puzzle patch server ranked build mod",
    "Fitness": "workout running squat protein cardio stretch marathon gym strength routine recovery rep",
    "Cooking": "recipe oven garlic spice dough sauce skillet roast flavor bake simmer knife",
    "Personal Finance": "budget savings rent loan credit invest retirement expense salary debt index fund",
    "Travel": "flight hostel itinerary passport train backpack visa budget airport tour city beach",
    "Parenting": "toddler school bedtime tantrum daycare homework teen routine nap sibling chores play",
    "Productivity": "calendar habit focus deadline notes task planner email meeting routine goal list",
    "History": "empire war century archive treaty dynasty revolution medieval source museum era king",
    "Politics": "election policy vote parliament campaign debate senator reform party council tax law",
    "Religion": "faith scripture prayer church temple ritual belief community meditation tradition holy",
    "Language": "grammar vocabulary accent fluent dialect translation verb lesson immersion spanish japanese",
    "Law": "contract court lawyer lease tenant liability statute appeal claim evidence judge fee",
    "Education": "teacher curriculum exam lecture tutor degree student homework grade classroom thesis",
}


def _words(rng: random.Random, vocab: list[str], topic: list[str], count: int, topical: float) -> str:
    picks = rng.choices(vocab, k=count)
    marks = rng.choices((True, False), weights=(topical, 1 - topical), k=count)
    words = [rng.choice(topic) if mark else word for word, mark in zip(picks, marks)]
    # Sentences of 8-20 words keep punctuation and capitals realistic for tokenizers.
    out: list[str] = []
    start = 0
    while start < len(words):
        end = start + rng.randint(8, 20)
        sentence = words[start:end]
        out.append(sentence[0].capitalize() + " " + " ".join(sentence[1:]) + ".")
        start = end
    return " ".join(out)


def _profile(rng: random.Random, row_id: str, topics: list[str]) -> list[dict[str, str]]:
    # Heavy-tailed size: a log-normal post count (clipped to 20-200), a personal
    # verbosity factor and log-normal post lengths; tuned for ~90 KB per profile.
    count = min(200, max(20, round(rng.lognormvariate(math.log(55), 0.6))))
    verbosity = rng.lognormvariate(0.0, 0.45)
    posts = []
    for n in range(count):
        topic = rng.choice(topics) if rng.random() < 0.7 else rng.choice(list(_TOPIC))
        words = max(8, min(3000, round(rng.lognormvariate(math.log(170), 0.75) * verbosity)))
        posts.append({"category": topic, "id": f"{row_id}-p{n + 1}",
                      "text": _words(rng, _COMMON, _TOPIC[topic].split(), words, 0.12)})
    return posts


def make_row(rng: random.Random, row_id: str, topics: list[str]) -> dict[str, Any]:
    """One synthetic row in the HF schema."""
    topic = rng.choice(topics)
    terms = _TOPIC[topic].split()
    profile = _profile(rng, row_id, [topic, rng.choice(topics)])
    aspects = [{
        "aspect": _words(rng, _COMMON, terms, rng.randint(8, 16), 0.3),
        "evidence": _words(rng, _COMMON, terms, rng.randint(15, 30), 0.2),
        "reason": _words(rng, _COMMON, terms, rng.randint(12, 25), 0.2),
    } for _ in range(rng.randint(2, 4))]
    chosen = _words(rng, _COMMON, terms, rng.randint(80, 115), 0.25)
    rejected = _words(rng, _COMMON, terms, rng.randint(80, 115), 0.15)
    return {
        "id": row_id,
        "question": _words(rng, _COMMON, terms, rng.randint(12, 30), 0.2).rstrip(".") + "?",
        "category": topic,
        "profile": profile,
        "rubric_aspects": aspects,
        "narrative": _words(rng, _COMMON, terms, rng.randint(40, 80), 0.2),
        "chosen": chosen,
        "rejected": rejected,
    }


def generate(out: Path, seed: int = 0, scale: float = 1.0, fmt: str = "parquet") -> dict[str, Any]:
    """Write every subset under ``out``; return size statistics.

    Args:
        out: target folder (created).
        seed: any integer; the same seed gives the same files.
        scale: row-count multiplier (2 = twice the published rows, for scaling runs).
        fmt: ``parquet`` (as on the hub) or ``jsonl``.
    """
    sizes_kb: list[float] = []
    counts: list[int] = []
    rows_by_subset: dict[str, int] = {}
    for config, (short, published, topics) in SUBSETS.items():
        rng = random.Random(f"prb-fullsize:{seed}:{config}")
        total = max(1, round(published * scale))
        rows = [make_row(rng, f"{short}-{n:05d}", topics) for n in range(total)]
        for row in rows:
            sizes_kb.append(sum(len(p["text"]) + len(p["id"]) + len(p["category"]) for p in row["profile"]) / 1000)
            counts.append(len(row["profile"]))
        folder = out / config
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob(f"{FILE}.*"):
            stale.unlink()
        if fmt == "jsonl":
            with (folder / f"{FILE}.jsonl").open("w", encoding="utf-8") as handle:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(rows), folder / f"{FILE}.parquet")
        rows_by_subset[config] = total
    ordered = sorted(sizes_kb)
    return {
        "rows": rows_by_subset,
        "profile_kb_mean": statistics.fmean(sizes_kb),
        "profile_kb_median": statistics.median(sizes_kb),
        "profile_kb_p95": ordered[int(0.95 * (len(ordered) - 1))],
        "profile_kb_max": ordered[-1],
        "posts_mean": statistics.fmean(counts),
        "posts_min": min(counts),
        "posts_max": max(counts),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="folder to write (HF layout)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0, help="row-count multiplier (default 1 = 2,830 rows)")
    parser.add_argument("--format", choices=("parquet", "jsonl"), default="parquet")
    args = parser.parse_args()
    started = time.perf_counter()
    stats = generate(args.out, args.seed, args.scale, args.format)
    print(json.dumps(stats, indent=2))
    print(f"wrote {sum(stats['rows'].values()):,} rows to {args.out} in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

"""Full-size synthetic bring-your-own preference data (``personalized_custom``), for benchmarks only.

The same rows as ``fullsize_data.py`` (2,830 at ``--scale 1``, the same seed gives the
same text) grouped into users of five preferences each: a user's ``profile`` is the posts
of their first row (about 90 KB, a long tail), each preference is a row's question with its
chosen and rejected answers (``response_A`` / ``response_B`` in a seeded order), the
narrative as the reason and the row's category as its tag. Written as one ``.jsonl`` file
(a user per line) or one ``.json`` array, named ``preferences.<format>``.

    python benchmarks/custom_data.py /tmp/prb-custom --scale 2 --format json

Not a test and not benchmark data: its numbers say nothing about any model.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fullsize_data import SUBSETS, make_row

PER_USER = 5


def users(seed: int = 0, scale: float = 1.0) -> Iterator[dict[str, Any]]:
    """The users, one at a time (a subset's leftover rows make a last, smaller user).

    Args:
        seed: any integer; the same seed gives the same users.
        scale: row-count multiplier (1 = the published 2,830 rows).
    """
    for config, (short, published, topics) in SUBSETS.items():
        rng = random.Random(f"prb-fullsize:{seed}:{config}")
        order = random.Random(f"prb-custom:{seed}:{config}")
        total = max(1, round(published * scale))
        for first in range(0, total, PER_USER):
            rows = [make_row(rng, f"{short}-{n:05d}", topics) for n in range(first, min(total, first + PER_USER))]
            prefs = []
            for row in rows:
                a_chosen = order.random() < 0.5
                prefs.append({
                    "prompt": row["question"],
                    "response_A": row["chosen"] if a_chosen else row["rejected"],
                    "response_B": row["rejected"] if a_chosen else row["chosen"],
                    "chosen_response": "response_A" if a_chosen else "response_B",
                    "reason": row["narrative"],
                    "value_alignment": [row["category"]],
                })
            yield {"user_id": f"{short}-u{first // PER_USER:05d}", "demographics": {"subset": config},
                   "profile": [post["text"] for post in rows[0]["profile"]], "preferences": prefs}


def generate(out: Path, seed: int = 0, scale: float = 1.0, fmt: str = "jsonl") -> Path:
    """Write ``out/preferences.<fmt>`` and return its path.

    Args:
        out: target folder (created).
        seed: see :func:`users`.
        scale: see :func:`users`.
        fmt: ``jsonl`` (a user per line) or ``json`` (an array).
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"preferences.{fmt}"
    with path.open("w", encoding="utf-8") as handle:
        for n, user in enumerate(users(seed, scale)):
            text = json.dumps(user, ensure_ascii=False)
            if fmt == "jsonl":
                handle.write(text + "\n")
            else:
                handle.write(("[" if n == 0 else ",\n") + text)
        if fmt == "json":
            handle.write("]\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="folder to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0, help="row-count multiplier (default 1 = 2,830 rows)")
    parser.add_argument("--format", choices=("jsonl", "json"), default="jsonl")
    args = parser.parse_args()
    started = time.perf_counter()
    path = generate(args.out, args.seed, args.scale, args.format)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

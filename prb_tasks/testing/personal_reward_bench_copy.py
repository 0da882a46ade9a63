"""A small SYNTHETIC copy of PersonalRewardBench's two halves in the hub layout, for tests, the docs'
offline run and benchmarks; its rows say nothing about any model or person.

Each half is ``<dir>/<hub name>/data/<hub split>-00000-of-00001.parquet``, with the quirks of the real
copies: the ``split`` column (train / val / test) is not the hub split (rows of every user split sit in
each hub split, and a row of another ``split`` value is there to be left out), multi-turn contexts,
non-English text, users with one pair or no train pairs, ``chosen`` / ``rejected`` as one role/content
turn (``list_turns``: as lists of turns, the form SynthesizeMe's formatter also reads), a ``flip``
column, the score columns and the authors' judges' prediction columns their loaders drop.

Usage: ``python -m prb_tasks.testing.personal_reward_bench_copy DIR [--users N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

from prb_tasks.data.personal_reward_bench.constants import HALVES
from prb_tasks.testing.hub_layout import write_shard

_TOPICS = ("tea", "rivers", "chess", "bread", "comets", "violins", "tides", "maps")
_FOREIGN = ("¿Cuál es la mejor manera de aprender a cocinar?", "Wie erkläre ich Kindern die Sterne?",
            "日本の春祭りについて教えてください。", "Comment planter des tomates sur un balcon ?")


def _turn(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


def _pair(rng: random.Random, user: int, n: int, half: str, split: str, as_list: bool) -> dict[str, Any]:
    topic = rng.choice(_TOPICS)
    question = rng.choice(_FOREIGN) if n % 5 == 3 else f"Tell me about {topic} ({half} user {user}, pair {n})."
    context = [_turn("user", question)]
    if n % 4 == 1:  # a multi-turn context: the pair answers the second message
        context = [_turn("user", f"Hi, I have a question about {topic}."),
                   _turn("assistant", f"Sure, ask me anything about {topic}."), _turn("user", question)]
    # This user likes detail: the chosen answer is longer for even users, shorter for odd ones.
    long_text = f"Here is a detailed answer about {topic}: " + " ".join(rng.choice(_TOPICS) for _ in range(12))
    short_text = f"{topic.capitalize()}: briefly, " + rng.choice(_TOPICS) + "."
    chosen, rejected = (long_text, short_text) if user % 2 == 0 else (short_text, long_text)
    if n % 7 == 6:  # now and then the user goes against their habit
        chosen, rejected = rejected, chosen
    shaped = ([_turn("assistant", chosen)], [_turn("assistant", rejected)]) if as_list else \
        (_turn("assistant", chosen), _turn("assistant", rejected))
    flip = rng.random() < 0.5
    return {"user_id": f"{half}-user-{user:02d}", "split": split, "conversation_id": f"{half}-c{user}-{n}",
            "context": context, "chosen": shaped[0], "rejected": shaped[1], "flip": flip,
            "chosen_score": 80.0 if half == "prism" else None, "rejected_score": 40.0 if half == "prism" else None,
            "dataset": half, "agreement": 1.0, "query_reasoning": "r", "personalizable_query": True,
            "prediction_meta-llama/Llama-3.3-70B-Instruct": "First", "reasoning_meta-llama/Llama-3.3-70B-Instruct": "r"}


def half_rows(half: str, users: int = 6, seed: int = 0, list_turns: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Hub split -> rows of one half.

    Args:
        half: ``arena`` or ``prism``.
        users: users with a full history (two more users come with few pairs).
        seed: the texts' and flips' seed.
        list_turns: ``chosen`` / ``rejected`` as lists of turns (a parquet column holds one form).
    """
    rng = random.Random(f"{seed}-{half}")
    hub: dict[str, list[dict[str, Any]]] = {"train": [], "test": []}
    for user in range(users):
        as_list = list_turns
        n = 0
        for split, count in (("train", 9), ("val", 2), ("test", 3)):
            for _ in range(count):
                # Rows of every user split sit in both hub splits: the loaders filter on `split`, not the hub split.
                hub["train" if n % 3 else "test"].append(_pair(rng, user, n, half, split, as_list))
                n += 1
    few = users  # one train pair and one test pair
    hub["train"].append(_pair(rng, few, 0, half, "train", list_turns))
    hub["test"].append(_pair(rng, few, 1, half, "test", list_turns))
    none = users + 1  # test pairs only: a judge sees no history
    hub["test"] += [_pair(rng, none, n, half, "test", list_turns) for n in range(2)]
    hub["train"].append({**_pair(rng, 0, 99, half, "unused", list_turns)})  # a split value the loaders leave out
    return hub


def write_copy(root: Path, users: int = 6, seed: int = 0, halves: tuple[str, ...] = tuple(HALVES),
               fmt: str = "parquet", list_turns: bool = False) -> Path:
    """Write both halves under ``root`` (``root/<hub name>/data/...``); returns ``root``.

    Args:
        root: the copy's top folder (created).
        users: users with a full history per half.
        seed: the texts' seed.
        halves: which halves to write.
        fmt: ``parquet`` (the hub's) or ``jsonl``.
        list_turns: write ``chosen`` / ``rejected`` as lists of turns.
    """
    for half in halves:
        folder = root / HALVES[half][1] / "data"
        for split, rows in half_rows(half, users, seed, list_turns).items():
            write_shard(folder, rows, fmt, split)
    return root


def main(argv: list[str] | None = None) -> int:
    """Write a copy: ``DIR [--users N] [--seed S]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--users", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    write_copy(args.dir, args.users, args.seed)
    print(f"wrote {args.dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

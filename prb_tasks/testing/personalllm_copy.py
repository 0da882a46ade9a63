"""Small SYNTHETIC PersonalLLM copies in the exact HF layout (``<dir>/data/test-*.parquet``), for tests
and the offline example of ``docs/personalllm.md``; their rewards are random and say nothing about any model.

Usage: ``python -m prb_tasks.testing.personalllm_copy DIR [--prompts N] [--seed S]``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from prb_tasks.data.personalllm.constants import N_RESPONSES, NORMALISATION, REWARD_MODELS, score_column
from prb_tasks.testing.hub_layout import write_shard

TOPICS = ("gardening", "tax returns", "sourdough", "bicycle repair", "chess openings", "job interviews",
          "sleep", "budget travel", "houseplants", "learning guitar", "running", "saving money")
STYLES = ("in three short steps", "with a worked example", "as a friendly chat", "with a list of pros and cons",
          "in formal language", "with a joke at the start", "citing numbers", "in one sentence")


def fixture_rows(n_prompts: int = 24, seed: int = 0) -> list[dict[str, Any]]:
    """Wide rows like the HF table: prompt, subset, prompt_id, 8 responses with models and 80 rewards."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for p in range(n_prompts):
        topic = TOPICS[p % len(TOPICS)]
        row: dict[str, Any] = {
            "prompt": f"Question {p}: what should I know about {topic}?",
            "subset": ("anthropic_hh", "ultrafeedback")[p % 2],
            "prompt_id": f"pid-{p:03d}",
        }
        for i in range(1, N_RESPONSES + 1):
            row[f"response_{i}"] = f"Answer {i} to question {p} about {topic}, {STYLES[i - 1]}."
            row[f"response_{i}_model"] = f"writer-{i}"
            for model in REWARD_MODELS:
                mean, sd = NORMALISATION[model]
                row[score_column(i, model)] = round(mean + sd * rng.gauss(0.0, 1.0), 4)
        rows.append(row)
    return rows


def write_personalllm(root: Path, rows: list[dict[str, Any]], fmt: str = "parquet", split: str = "test") -> Path:
    """Write ``rows`` as ``root/data/<split>-00000-of-00001.<fmt>``; returns ``root``."""
    write_shard(root / "data", rows, fmt, split)
    return root


def main(argv: list[str] | None = None) -> int:
    """``python -m prb_tasks.testing.personalllm_copy DIR``: write a copy and say where (one line)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m prb_tasks.testing.personalllm_copy",
                                     description="write a small SYNTHETIC PersonalLLM copy in the hub layout")
    parser.add_argument("folder", type=Path, help="where to write it (DIR/data/test-00000-of-00001.parquet)")
    parser.add_argument("--prompts", type=int, default=24, help="prompts (rows) to write (default 24)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random rewards (default 0)")
    args = parser.parse_args(argv)
    write_personalllm(args.folder, fixture_rows(args.prompts, args.seed))
    print(f"wrote a SYNTHETIC PersonalLLM copy of {args.prompts} prompts in {args.folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

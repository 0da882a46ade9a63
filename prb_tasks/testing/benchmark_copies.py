"""Small SYNTHETIC copies of RewardBench 2 and RM-Bench in their exact file layouts, for tests,
benchmarks and the offline walkthrough (``docs/comparing.md``); their rows say nothing about any model.

- RewardBench 2: ``<dir>/data/test-00000-of-00001.parquet`` with the columns and types of
  ``allenai/reward-bench-2`` (``id`` string, ``prompt``, ``chosen`` / ``rejected`` lists,
  ``num_correct``, ``num_incorrect``, ``total_completions``, ``models``, ``subset``,
  ``additional_metadata``); Ties rows come as ``ref:<n>`` / ``tied:<n>`` pairs.
- RM-Bench: ``<dir>/total_dataset.json``, the authors' JSON array (``id``, ``prompt``, three
  ``chosen`` and three ``rejected`` responses, ``domain``, plus the ``subset`` field their rows carry).

Responses differ in length (so the ``length`` baseline gives varied results, ties included).

Usage: ``python -m prb_tasks.testing.benchmark_copies rewardbench2|rmbench DIR [--rows N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from prb_tasks.testing.hub_layout import write_shard

BEST_OF_N = ("Factuality", "Precise IF", "Math", "Safety", "Focus")
RMBENCH_DOMAINS = ("chat", "code", "math", "safety-refuse", "safety-response")
_WORDS = ("alpha", "beta", "gamma", "delta", "eps")


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _rb2_row(row_id: str, subset: str, prompt: str, chosen: list[str], rejected: list[str],
             rng: random.Random) -> dict[str, Any]:
    total = len(chosen) + len(rejected)
    return {"id": row_id, "prompt": prompt, "chosen": chosen, "rejected": rejected,
            "num_correct": len(chosen), "num_incorrect": len(rejected), "total_completions": total,
            "models": [f"writer-{i}" for i in range(total)], "subset": subset,
            "additional_metadata": {"category": "synthetic", "correct": None, "index": float(rng.randint(0, 99)),
                                    "instruction_id_list": [], "label": None, "method": "synthetic", "models": [],
                                    "prompt_norm": None, "subcategory": None, "valid": None}}


def rewardbench2_rows(per_subset: int = 6, tie_prompts: int = 5, seed: int = 0, best_of: int = 4,
                      tied_correct: int = 3) -> list[dict[str, Any]]:
    """Rows of all six subsets: ``per_subset`` best-of-``best_of`` rows each and ``tie_prompts`` ref/tied pairs.

    Args:
        per_subset: rows per best-of-N subset.
        tie_prompts: Ties prompts (two rows each).
        seed: generator seed.
        best_of: responses per best-of-N row (one correct).
        tied_correct: correct answers of a ``tied:`` row.
    """
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for subset in BEST_OF_N:
        for n in range(per_subset):
            chosen = [_text(rng, rng.choice((3, 6, 9)))]
            rejected = [_text(rng, rng.choice((3, 6, 9))) for _ in range(best_of - 1)]
            rows.append(_rb2_row(f"{len(rows)}", subset, f"{subset} question {n}?", chosen, rejected, rng))
    for n in range(tie_prompts):
        question = f"Name one of the primary colours ({n})."
        ref_c, ref_r = [_text(rng, rng.choice((4, 8)))], [_text(rng, rng.choice((2, 4, 6))) for _ in range(3)]
        rows.append(_rb2_row(f"ref:{n}", "Ties", question, ref_c, ref_r, rng))
        tied_c = [_text(rng, rng.choice((4, 5, 8))) for _ in range(tied_correct)]
        tied_r = [_text(rng, rng.choice((2, 4, 6))) for _ in range(rng.choice((3, 5)))]
        rows.append(_rb2_row(f"tied:{n}", "Ties", question, tied_c, tied_r, rng))
    return rows


def write_rewardbench2(root: Path, rows: list[dict[str, Any]], fmt: str = "parquet") -> Path:
    """Write ``rows`` as ``root/data/test-00000-of-00001.<fmt>``; returns ``root``."""
    write_shard(root / "data", rows, fmt)
    return root


def rmbench_rows(per_domain: int = 5, seed: int = 0) -> list[dict[str, Any]]:
    """``per_domain`` rows of each of the five raw domains."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for domain in RMBENCH_DOMAINS:
        for n in range(per_domain):
            def answers() -> list[str]:
                return [_text(rng, rng.choice((2, 4))), _text(rng, rng.choice((5, 8))), _text(rng, rng.choice((8, 12)))]
            row = {"id": len(rows) + 100, "prompt": f"{domain} question {n}?", "chosen": answers(),
                   "rejected": answers(), "domain": domain, "subset": f"{domain}-source"}
            if domain == "chat":
                row["error_key"] = "fact"
            rows.append(row)
    return rows


def write_rmbench(root: Path, rows: list[dict[str, Any]], in_data: bool = False) -> Path:
    """Write ``rows`` as ``root/total_dataset.json`` (or ``root/data/...``); returns ``root``."""
    folder = root / "data" if in_data else root
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "total_dataset.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prb_tasks.testing.benchmark_copies",
                                     description="write a small SYNTHETIC copy of RewardBench 2 or RM-Bench")
    parser.add_argument("benchmark", choices=("rewardbench2", "rmbench"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rows", type=int, default=6, help="rows per subset or domain (default 6)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.benchmark == "rewardbench2":
        write_rewardbench2(args.folder, rewardbench2_rows(args.rows, max(1, args.rows - 1), args.seed))
        print(f"wrote a SYNTHETIC RewardBench 2 copy in {args.folder}/data/test-00000-of-00001.parquet")
    else:
        write_rmbench(args.folder, rmbench_rows(args.rows, args.seed))
        print(f"wrote a SYNTHETIC RM-Bench copy in {args.folder}/total_dataset.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Write small RewardBench 2 copies in the exact HF layout (``<dir>/data/test-00000-of-00001.parquet``).

Columns and types follow the dataset card of ``allenai/reward-bench-2``: ``id`` (string),
``prompt``, ``chosen`` / ``rejected`` (lists of strings), ``num_correct``,
``num_incorrect``, ``total_completions`` (int64), ``models`` (list of strings),
``subset`` and the ``additional_metadata`` struct. Responses differ in length so the
``length`` baseline of ``prb-rm`` gives varied results, including exact ties.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

BEST_OF_N = ("Factuality", "Precise IF", "Math", "Safety", "Focus")


def _metadata(rng: random.Random) -> dict[str, Any]:
    return {"category": "fixture", "correct": None, "index": float(rng.randint(0, 99)),
            "instruction_id_list": [], "label": None, "method": "synthetic", "models": [],
            "prompt_norm": None, "subcategory": None, "valid": None}


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(("alpha", "beta", "gamma", "delta", "eps")) for _ in range(n))


def fixture_rows(per_subset: int = 6, tie_prompts: int = 5, seed: int = 0) -> list[dict[str, Any]]:
    """Rows of all six subsets: ``per_subset`` best-of-4 rows each and ``tie_prompts`` ref/tied pairs."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for subset in BEST_OF_N:
        for n in range(per_subset):
            chosen = [_words(rng, rng.choice((3, 6, 9)))]
            rejected = [_words(rng, rng.choice((3, 6, 9))) for _ in range(3)]
            rows.append(_row(f"{len(rows)}", subset, f"{subset} question {n}?", chosen, rejected, rng))
    for n in range(tie_prompts):
        question = f"Name one of the primary colours ({n})."
        ref_c, ref_r = [_words(rng, rng.choice((4, 8)))], [_words(rng, rng.choice((2, 4, 6))) for _ in range(3)]
        rows.append(_row(f"ref:{n}", "Ties", question, ref_c, ref_r, rng))
        tied_c = [_words(rng, rng.choice((4, 5, 8))) for _ in range(3)]
        tied_r = [_words(rng, rng.choice((2, 4, 6))) for _ in range(rng.choice((3, 5)))]
        rows.append(_row(f"tied:{n}", "Ties", question, tied_c, tied_r, rng))
    return rows


def _row(row_id: str, subset: str, prompt: str, chosen: list[str], rejected: list[str],
         rng: random.Random) -> dict[str, Any]:
    return {"id": row_id, "prompt": prompt, "chosen": chosen, "rejected": rejected,
            "num_correct": len(chosen), "num_incorrect": len(rejected),
            "total_completions": len(chosen) + len(rejected),
            "models": [f"writer-{i}" for i in range(len(chosen) + len(rejected))],
            "subset": subset, "additional_metadata": _metadata(rng)}


def write_rewardbench2(root: Path, rows: list[dict[str, Any]], fmt: str = "parquet") -> Path:
    """Write ``rows`` as ``root/data/test-00000-of-00001.<fmt>``; returns ``root``."""
    folder = root / "data"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"test-00000-of-00001.{fmt}"
    if fmt == "jsonl":
        target.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), target)
    return root

"""Write small RM-Bench copies as the authors ship them: ``total_dataset.json``, a JSON array of rows
with ``id``, ``prompt``, three ``chosen`` and three ``rejected`` responses (concise, detailed plain,
detailed markdown) and ``domain`` (chat, code, math, safety-refuse, safety-response), plus the extra
fields some rows carry (``subset``, ``error_key``)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

RAW_DOMAINS = ("chat", "code", "math", "safety-refuse", "safety-response")


def fixture_rows(per_domain: int = 5, seed: int = 0) -> list[dict[str, Any]]:
    """``per_domain`` rows of each raw domain; response lengths vary so the length baseline ties too."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for domain in RAW_DOMAINS:
        for n in range(per_domain):
            def answer(words: int) -> str:
                return " ".join(rng.choice(("ok", "fine", "yes", "sure")) for _ in range(words))
            row = {"id": len(rows) + 100, "prompt": f"{domain} question {n}?",
                   "chosen": [answer(rng.choice((2, 4))), answer(rng.choice((5, 8))), answer(rng.choice((8, 12)))],
                   "rejected": [answer(rng.choice((2, 4))), answer(rng.choice((5, 8))), answer(rng.choice((8, 12)))],
                   "domain": domain, "subset": f"{domain}-source"}
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

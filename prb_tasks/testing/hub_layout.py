"""Write rows as one shard of a Hugging Face dataset repo, the layout every prb loader reads.

The synthetic copies (PersonalLLM, RewardBench 2, Personalized RewardBench in the tests) differ
in their rows and folders, not in how a shard is written; this is that one way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_shard(folder: Path, rows: list[dict[str, Any]], fmt: str = "parquet", split: str = "test") -> Path:
    """Write ``rows`` as ``folder/<split>-00000-of-00001.<fmt>`` and return that file.

    Args:
        folder: the shard's folder (created with its parents), e.g. ``<repo>/data``.
        rows: one dict per row; parquet infers the column types from them.
        fmt: ``parquet`` (the hub's) or ``jsonl`` (one JSON object per line).
        split: the split's name at the start of the file name.
    """
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{split}-00000-of-00001.{fmt}"
    if fmt == "jsonl":
        target.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), target)
    return target

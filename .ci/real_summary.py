"""One summary line for a workflow of `.ci/real`: its runs' headline numbers, then
every line in which prb said what the real output lacked (``prb: ...; try ...``) and
every ``numbers:`` line the workflow printed itself.

Usage: python .ci/real_summary.py RUN_FOLDER LOG_FILE
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

# Shown when a run reports them, in this order (shares in %, grades and words as they are).
METRICS = ("acc", "acc_official", "parse_fail", "consistency", "pos_a_rate", "soft_acc", "soft_cover", "ece",
           "error_rate", "skip_rate",
           "grade_unparsed", "ungraded", "bon_gold", "bon_gain", "bon_top", "aukc", "candidate_words",
           "empty_candidate", "response_words", "empty_response")
SOFT = ("soft_acc", "soft_cover", "ece")
NOT_SHARES = ("bon_gold", "bon_gain", "candidate_words", "response_words")
LACKED = re.compile(r"^prb[ :].*; try ")


def _cell(metric: str, value: float) -> str:
    if math.isnan(value):
        return f"{metric} nan"
    return f"{metric} {value:.2f}" if metric in NOT_SHARES else f"{metric} {100 * value:.1f}%"


def run_numbers(results_file: Path) -> str:
    data = json.loads(results_file.read_text(encoding="utf-8"))
    table = data.get("results") or {}
    members = {t for subs in (data.get("group_subtasks") or {}).values() for t in subs}
    parts = []
    for name, row in table.items():
        if name in members:
            continue
        # Soft-verdict metrics are NaN in every run without logprobs=: shown only where measured.
        cells = [_cell(m, float(row[f"{m},none"])) for m in METRICS
                 if isinstance(row.get(f"{m},none"), (int, float))
                 and not (m in SOFT and math.isnan(float(row[f"{m},none"])))]
        parts.append(f"{name}: {', '.join(cells) or 'no numbers'}")
    return "; ".join(parts)


def main(folder: Path, log: Path) -> str:
    runs = sorted(folder.rglob("results_*.json"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []
    found = [run_numbers(p) for p in runs]
    text = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else []
    found += [line.strip() for line in text if LACKED.match(line.strip())]
    found += [line.strip().removeprefix("numbers: ") for line in text if line.startswith("numbers: ")]
    return " | ".join(found) or "no numbers and no line saying why (a silent result)"


if __name__ == "__main__":
    print(main(Path(sys.argv[1]), Path(sys.argv[2])))

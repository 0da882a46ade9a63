"""PersonalRewardBench's published rows, as runs ``prb compare`` reads beside your own.

Each row is written as an lm-eval results file (``<out>/<row>/results_published.json``) of a backend
named ``published``: its label names the model, the protocol the number was computed with and where it
was published; it has no sample logs, so ``prb compare`` shows the number without an interval of its
own, in the section of the hub data (never ranked against a run on another copy). Usage::

    python -m prb_tasks.data.personal_reward_bench.published OUT
    prb compare runs/ OUT

The numbers are the papers' (accuracy in percent); prb ran none of them. The Chatbot Arena / PRISM
pairs of P-GenRM, SynthesizeMe and the LaMP-style retrieval baseline are as P-GenRM's comparison lists
them; the four Llama-3.1-8B judge rows on PRISM are SynthesizeMe's.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from prb_tasks.data.personal_reward_bench.constants import HALVES

PGENRM = "P-GenRM (ICLR 2026)"
SYNTHESIZEME = "SynthesizeMe (ACL 2025)"
#: What each protocol id means, for labels and docs.
PROTOCOLS = {
    "pgenrm": "P-GenRM's official: one order, 6 history pairs, JSON scores, ties and failures dropped, mean of 3 runs",
    "synthesizeme": "SynthesizeMe's official: both orders, ties and failures wrong, bootstrap over judgments",
    "pgenrm_table": "as P-GenRM's comparison table reports it (that table's protocol, not re-checked by prb)",
}


@dataclass(frozen=True)
class PublishedRow:
    """One published accuracy.

    Attributes:
        model: the model or method.
        half: ``arena`` or ``prism``.
        accuracy: percent.
        protocol: a key of :data:`PROTOCOLS`.
        source: where it was published.
        setting: what the model was shown (:mod:`prb_tasks.report.settings`).
    """

    model: str
    half: str
    accuracy: float
    protocol: str
    source: str
    setting: str = "history"


ROWS: tuple[PublishedRow, ...] = (
    PublishedRow("P-GenRM-8B", "arena", 75.92, "pgenrm", PGENRM),
    PublishedRow("P-GenRM-8B", "prism", 68.06, "pgenrm", PGENRM),
    PublishedRow("SynthesizeMe", "arena", 72.05, "pgenrm_table", PGENRM),
    PublishedRow("SynthesizeMe", "prism", 63.74, "pgenrm_table", PGENRM),
    PublishedRow("LaMP-style retrieval", "arena", 58.15, "pgenrm_table", PGENRM),
    PublishedRow("LaMP-style retrieval", "prism", 54.17, "pgenrm_table", PGENRM),
    PublishedRow("Llama-3.1-8B judge, default", "prism", 52.80, "synthesizeme", SYNTHESIZEME, "question"),
    PublishedRow("Llama-3.1-8B judge, demographics", "prism", 54.06, "synthesizeme", SYNTHESIZEME,
                 "person"),
    PublishedRow("Llama-3.1-8B judge, memory", "prism", 54.17, "synthesizeme", SYNTHESIZEME),
    PublishedRow("Llama-3.1-8B judge, SynthesizeMe", "prism", 55.24, "synthesizeme", SYNTHESIZEME),
)


def task_of(row: PublishedRow) -> str:
    """The prb task a row stands beside: the half's clean judge task."""
    return f"personal_reward_bench_{row.half}"


def results_file(row: PublishedRow) -> dict[str, object]:
    """The lm-eval results dict of one row (what ``prb compare`` reads)."""
    task = task_of(row)
    repo = HALVES[row.half][0]
    return {
        "results": {task: {"alias": task, "acc,none": round(row.accuracy / 100, 6)}},
        "group_subtasks": {task: []},
        "configs": {task: {"task": task, "output_type": "generate_until",
                           "metadata": {"setting": row.setting, "published": True, "protocol": row.protocol}}},
        "config": {"model": "published",
                   "model_args": {"model": row.model, "protocol": row.protocol}},
        "prb": {"data_sources": {task: {"kind": "hub", "location": repo, "subset": "test pairs", "rows": 0}},
                "published": {"protocol": PROTOCOLS[row.protocol], "source": row.source}},
    }


def write_published(out: Path) -> list[Path]:
    """Write every row as ``out/<model>_<half>/results_published.json``; returns the files.

    Args:
        out: the folder to write (created).
    """
    written = []
    for row in ROWS:
        slug = re.sub(r"[^a-z0-9]+", "_", f"{row.model}_{row.half}".lower()).strip("_")
        folder = out / slug
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "results_published.json"
        path.write_text(json.dumps(results_file(row), indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Write the published rows into OUT for ``prb compare``."""
    parser = argparse.ArgumentParser(description="PersonalRewardBench's published rows as runs for prb compare")
    parser.add_argument("out", type=Path, help="folder to write (one sub-folder per row)")
    args = parser.parse_args(argv)
    try:
        files = write_published(args.out)
    except OSError as exc:
        print(f"prb: cannot write {args.out}: {exc.strerror or exc}")
        return 1
    print(f"wrote {len(files)} published rows into {args.out}; show them with: prb compare RUNS {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Find and read the plans that stage 1 of the planner wrote.

Stage 1 (``personalized_rb_plan``) is an ordinary lm-eval run; with ``--log_samples``
it writes ``samples_personalized_rb_plan_<subset>_<timestamp>.jsonl`` files, one per
subtask, each line holding the document (with its ``pair_key`` and ``question_sha``)
and the model's reply. Stage 2 (``--metadata '{"plans": PATH}'``) reads them here.

``PATH`` is one such file, or a folder searched recursively. Re-running stage 1 into
the same folder adds newer files: the newest per subtask wins. Plans of one subtask
in two different folders (e.g. two planner models under one output path) are
ambiguous and refused, naming both.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from prb_tasks.common.textfiles import json_lines
from prb_tasks.data.errors import DataError

PLAN_TASK = "personalized_rb_plan"
_SAMPLES = re.compile(rf"^samples_({PLAN_TASK}_[A-Za-z0-9]+)_(.+)\.jsonl$")


def question_sha(question: str) -> str:
    """Short content hash of a question; ties a plan to the row it was made for."""
    return hashlib.sha256(question.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class PlanRecord:
    """One stage-1 reply.

    Attributes:
        pair_key: the row's key in the stage-1 document.
        question_sha: hash of the question the plan was made for.
        completion: the planner's raw reply (or a backend failure marker).
        source: the samples file it came from.
    """

    pair_key: str
    question_sha: str
    completion: str
    source: Path


def _plan_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    by_task: dict[str, list[Path]] = {}
    for path in root.rglob("samples_*.jsonl"):
        match = _SAMPLES.match(path.name)
        if match:
            by_task.setdefault(match.group(1), []).append(path)
    if not by_task:
        raise DataError(
            f"prb: no {PLAN_TASK} samples (samples_{PLAN_TASK}_*.jsonl) under '{root}'; run stage 1 "
            f"(--tasks {PLAN_TASK} --log_samples --output_path {root}) first"
        )
    chosen: list[Path] = []
    for task, paths in sorted(by_task.items()):
        folders = sorted({str(p.parent) for p in paths})
        if len(folders) > 1:
            raise DataError(
                f"prb: plans for {task} found in {len(folders)} folders ({folders[0]}, {folders[1]}"
                f"{', ...' if len(folders) > 2 else ''}); pass the one you mean as --metadata plans"
            )
        # lm-eval's timestamp in the name sorts chronologically: the newest run wins.
        chosen.append(max(paths, key=lambda p: p.name))
    return chosen


def _completion(sample: dict) -> str | None:
    filtered = sample.get("filtered_resps")
    if isinstance(filtered, list) and filtered and isinstance(filtered[0], str):
        return filtered[0]
    resps = sample.get("resps")
    if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0] \
            and isinstance(resps[0][0], str):
        return resps[0][0]
    return None


def _read(path: Path, into: dict[str, PlanRecord]) -> None:
    for number, sample in json_lines(path, "plans file", "pass the samples file stage 1 wrote", DataError):
        doc = sample.get("doc") if isinstance(sample, dict) else None
        completion = _completion(sample) if isinstance(sample, dict) else None
        if not isinstance(doc, dict) or doc.get("variant") != "plan" or completion is None:
            raise DataError(f"prb: '{path}' line {number} is not a {PLAN_TASK} sample "
                            "(needs doc.variant 'plan' and the reply); pass stage 1's samples")
        key = str(doc.get("pair_key"))
        if key in into and into[key].source != path:
            raise DataError(f"prb: row {key} has plans in two files ({into[key].source}, {path}); "
                            "pass one stage-1 run as --metadata plans")
        into[key] = PlanRecord(key, str(doc.get("question_sha", "")), completion, path)


@lru_cache(maxsize=8)
def _load(root: str, stamp: tuple) -> dict[str, PlanRecord]:
    records: dict[str, PlanRecord] = {}
    for path in _plan_files(Path(root)):
        _read(path, records)
    return records


def load_plans(path: str) -> dict[str, PlanRecord]:
    """Every stage-1 plan under ``path``, by ``pair_key``.

    Args:
        path: a samples file or a folder holding stage 1's output.
    """
    root = Path(path).expanduser()
    if not root.exists():
        raise DataError(f"prb: --metadata plans: '{root}' does not exist; give stage 1's --output_path "
                        f"folder or one samples_{PLAN_TASK}_*.jsonl file")
    # Re-read when files change within one process (tests, notebooks).
    stamp = tuple(sorted((str(p), p.stat().st_mtime_ns) for p in
                         ([root] if root.is_file() else root.rglob(f"samples_{PLAN_TASK}_*.jsonl"))))
    return _load(str(root.resolve()), stamp)

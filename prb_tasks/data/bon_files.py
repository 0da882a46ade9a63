"""Find and read Best-of-N candidates and their gold grades (Personalized RewardBench).

Candidates come from ``personalized_rb_bon_sample`` runs (samples files whose documents
have ``variant`` ``bon_sample``; each sample's reply list holds the N candidates) or
from the user's own JSONL file, one question per line::

    {"pair_key": "art/3", "candidates": ["first answer", "second answer", ...]}

(``id`` may replace ``pair_key`` when the data's ids are unique). Gold grades come from
``personalized_rb_bon_grade`` runs: one sample per candidate, tied to the candidate by
a hash of its text, so grades are reused whatever contestant reads them.

A path is one file or a folder searched recursively; runs of one task in two folders
are ambiguous and refused; the newest file per task wins (lm-eval's timestamp sorts).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from prb_tasks.common.textfiles import json_lines
from prb_tasks.data.errors import DataError
from prb_tasks.replies.grades import grade_value
from prb_tasks.replies.verdict import marker_outcome

SAMPLE_VARIANT = "bon_sample"
GRADE_VARIANT = "bon_grade"


def text_sha(text: str) -> str:
    """Short content hash of a candidate: ties a grade to the exact text graded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class CandidateSet:
    """The candidates of one question.

    Attributes:
        key: ``pair_key`` of the row, or None when the file named the row by ``id``.
        row_id: the row's ``id`` when given instead of ``pair_key``.
        texts: the candidates, in the order best-of-k reads them.
        source: file and line it came from (for messages).
    """

    key: Optional[str]
    row_id: Optional[str]
    texts: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Candidates:
    """Every question's candidates, and what was left out.

    Attributes:
        sets: the usable candidate sets.
        failed: questions dropped because a candidate's generation failed.
    """

    sets: list[CandidateSet]
    failed: int


def samples_with_variant(root: Path, variant: str) -> list[Path]:
    """Every ``samples_*.jsonl`` under ``root`` whose first document has ``variant`` (sorted).

    Args:
        root: a folder, searched recursively (unreadable or non-JSON files are passed over).
        variant: the ``variant`` field the task's documents carry (e.g. ``bon``, ``bon_sample``).
    """
    found = []
    for path in sorted(root.rglob("samples_*.jsonl")):
        try:
            with path.open(encoding="utf-8") as handle:
                first = json.loads(handle.readline() or "null")
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        doc = first.get("doc") if isinstance(first, dict) else None
        if isinstance(doc, dict) and doc.get("variant") == variant:
            found.append(path)
    return found


def _variant_files(root: Path, variant: str, task_hint: str) -> list[Path]:
    """Samples files under ``root`` whose documents have ``variant`` (newest per task)."""
    by_task: dict[str, list[Path]] = {}
    for path in samples_with_variant(root, variant):
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        by_task.setdefault(task, []).append(path)
    if not by_task:
        raise DataError(f"prb: no {task_hint} samples under '{root}'; run {task_hint} with --log_samples "
                        f"--output_path {root} first, or give the file itself")
    chosen: list[Path] = []
    for task, paths in sorted(by_task.items()):
        folders = sorted({str(p.parent) for p in paths})
        if len(folders) > 1:
            raise DataError(f"prb: {task} samples found in {len(folders)} folders ({folders[0]}, {folders[1]}); "
                            "pass the one you mean")
        chosen.append(max(paths, key=lambda p: p.name))
    return chosen


def _replies(sample: dict[str, Any]) -> list[Any]:
    """All replies of one logged sample: the filtered list (repeats kept), else the raw ones."""
    filtered = sample.get("filtered_resps")
    if isinstance(filtered, list) and filtered:
        first = filtered[0]
        return list(first) if isinstance(first, list) else list(filtered)
    resps = sample.get("resps")
    if isinstance(resps, list) and resps and isinstance(resps[0], list):
        return list(resps[0])
    return []


def _failed(text: Any) -> bool:
    return marker_outcome(text) is not None


def _exists(path: str, key: str, task: str) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise DataError(f"prb: --metadata {key}: '{root}' does not exist; give {task}'s --output_path folder "
                        "or the file itself")
    return root


def load_candidates(path: str) -> Candidates:
    """Every question's candidates under ``path`` (samples of the sampling task, or a user JSONL).

    Args:
        path: a file or folder, as given in ``--metadata candidates``.
    """
    root = _exists(path, "candidates", "personalized_rb_bon_sample")
    files = [root] if root.is_file() else _variant_files(root, SAMPLE_VARIANT, "personalized_rb_bon_sample")
    sets: list[CandidateSet] = []
    failed = 0
    seen: dict[str, str] = {}
    for file in files:
        for number, record in json_lines(file, "candidates file", "fix or remove that line", DataError):
            where = f"{file} line {number}"
            if not isinstance(record, dict):
                raise DataError(f"prb: candidates file {where} is not a JSON object")
            key: str | None
            row_id: str | None
            if isinstance(record.get("doc"), dict):
                doc = record["doc"]
                if doc.get("variant") != SAMPLE_VARIANT:
                    raise DataError(f"prb: {where} is not a personalized_rb_bon_sample sample; pass that task's "
                                    "samples or your own JSONL (pair_key or id, candidates)")
                key, row_id, texts = str(doc.get("pair_key")), None, _replies(record)
            else:
                given_key = record.get("pair_key")
                given_id = record.get("id")
                candidates = record.get("candidates")
                if (given_key is None) == (given_id is None):
                    raise DataError(f"prb: candidates file {where}: give exactly one of 'pair_key' or 'id'")
                if not isinstance(candidates, list) or not candidates \
                        or not all(isinstance(t, str) for t in candidates):
                    raise DataError(f"prb: candidates file {where}: 'candidates' must be a non-empty list of strings")
                key = None if given_key is None else str(given_key)
                row_id = None if given_id is None else str(given_id)
                texts = candidates
            name = key if key is not None else f"id:{row_id}"
            if name in seen:
                raise DataError(f"prb: question {name} has candidates twice ({seen[name]} and {where}); keep one")
            seen[name] = where
            if not texts or any(_failed(t) for t in texts):
                failed += 1
                continue
            sets.append(CandidateSet(key, row_id, tuple(texts), where))
    if not sets:
        raise DataError(f"prb: no usable candidates in '{root}'"
                        + (f" ({failed} questions had a failed generation)" if failed else ""))
    return Candidates(sets, failed)


def load_grades(path: str, rule: str = "prb") -> dict[tuple[str, str], Optional[float]]:
    """Every gold grade under ``path``: (pair_key, candidate hash) -> mean grade (None: unreadable).

    Args:
        path: a ``personalized_rb_bon_grade`` samples file or output folder (``--metadata grades``).
        rule: the contestant's preset (``prb`` or ``official``); grades made under the
            other one are refused (their readings differ).
    """
    root = _exists(path, "grades", "personalized_rb_bon_grade")
    files = [root] if root.is_file() else _variant_files(root, GRADE_VARIANT, "personalized_rb_bon_grade")
    grades: dict[tuple[str, str], Optional[float]] = {}
    for file in files:
        for number, sample in json_lines(file, "grades file", "fix or remove that line", DataError):
            doc = sample.get("doc") if isinstance(sample, dict) else None
            replies = _replies(sample) if isinstance(sample, dict) else []
            if not isinstance(doc, dict) or doc.get("variant") != GRADE_VARIANT or not replies:
                raise DataError(f"prb: '{file}' line {number} is not a personalized_rb_bon_grade sample; pass "
                                "that task's samples (run with --log_samples)")
            made = str(doc.get("rule") or "prb")
            if made != rule:
                raise DataError(f"prb: the grades in '{file}' were made with preset {made}, this run uses preset "
                                f"{rule}; grade the candidates again with --metadata preset {rule}, or run this "
                                f"step with preset {made}")
            grades[(str(doc.get("pair_key")), str(doc.get("candidate_sha")))] = grade_value(doc, replies[0])
    return grades

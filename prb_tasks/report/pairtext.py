"""The texts of each pair for the drill-down: question, both responses, rubric aspects.

Judge docs carry only the rendered prompt, so the texts come from the data the run
used when it can be read here (the bundled sample, a local copy that still exists,
``PRB_DATA_DIR``, or the HF cache of a hub run; only the needed columns, never the
large profiles), then from what the docs carry (scalar docs hold the question and
both responses), and last from the prompt as sent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from prb_tasks.common.errors import PRBError
from prb_tasks.common.resources import sample_dir
from prb_tasks.common.textfiles import json_lines
from prb_tasks.data.personalized_rb.reader import split_files
from prb_tasks.data.personalized_rb.schema import RubricAspect
from prb_tasks.data.personalized_rb.sources import ENV_VAR
from prb_tasks.data.personalized_rb.subsets import HF_REPO, HF_SPLIT, SUBSETS, Subset
from prb_tasks.data.rawfiles import describe_error
from prb_tasks.report.outcomes import Entry
from prb_tasks.report.source import HUB, LOCAL_PREFIX, SAMPLE, describe

_BY_CONFIG = {s.config: s for s in SUBSETS}


@dataclass
class PairText:
    """What a person needs to judge a pair themselves.

    Attributes:
        question: the user's question.
        chosen, rejected: the two responses (chosen = the one the user prefers).
        aspects: the user's rubric aspects (``aspect``, ``evidence``, ``reason``), the
            benchmark's scoring standard.
        prompt: the prompt as sent (what the model was shown: profile, history, demographics).
        prompt_chosen: where the chosen response sits in that prompt (A or B).
        reason: the user's own reason for this preference (your own data), the scoring standard.
        demographics: the user's demographics (your own data), as the file gives them.
    """

    question: str | None = None
    chosen: str | None = None
    rejected: str | None = None
    aspects: list[dict[str, str]] = field(default_factory=list)
    prompt: str | None = None
    prompt_chosen: str | None = None
    reason: str | None = None
    demographics: dict[str, Any] = field(default_factory=dict)


class _TextRow(BaseModel):
    """The columns of a benchmark row the drill-down shows (profiles are never read)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    question: str
    chosen: str
    rejected: str
    rubric_aspects: list[RubricAspect]


def _read_file(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path, columns=list(_TextRow.model_fields)).to_pylist()
    return [value for _, value in json_lines(path, "data file", "fix or remove that line")]


def _files(source: str, subset: Subset) -> list[Path]:
    """The data files a run read, when they are on this machine (never the network)."""
    if source == SAMPLE:
        return split_files(sample_dir(), subset)
    if source.startswith(LOCAL_PREFIX):
        folder = Path(source.removeprefix(LOCAL_PREFIX)).expanduser()
        if not folder.is_dir():
            raise PRBError(f"the folder {folder} is not on this machine")
        return split_files(folder, subset)
    if os.environ.get(ENV_VAR):
        return split_files(Path(os.environ[ENV_VAR]).expanduser(), subset)
    from huggingface_hub import try_to_load_from_cache

    path = try_to_load_from_cache(HF_REPO, f"{subset.config}/{HF_SPLIT}-00000-of-00001.parquet", repo_type="dataset")
    if not isinstance(path, str):
        raise PRBError(f"{HF_REPO} ({subset.config}) is not in the local HF cache")
    return [Path(path)]


def _from_data(source: str, configs: set[str], notes: list[str]) -> dict[tuple[str, int], _TextRow]:
    """(subset config, row number) -> texts, for the subsets of one source that can be read.

    Rows are found by position, as the docs' ``pair_key`` (``<subset>/<row number>``)
    names them, so a repeated ``id`` in the data cannot mix two pairs up.
    """
    rows: dict[tuple[str, int], _TextRow] = {}
    for config in sorted(configs):
        try:
            index = -1
            for path in _files(source, _BY_CONFIG[config]):
                for raw in _read_file(path):
                    index += 1
                    try:
                        row = _TextRow.model_validate(raw)
                    except ValidationError as exc:
                        raise PRBError(f"{path} row {index + 1}: {describe_error(exc)}") from None
                    rows[(config, index)] = row
        except (PRBError, OSError, ValueError, ImportError) as exc:
            hint = f" (set {ENV_VAR} to a local copy)" if source == HUB else ""
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            notes.append(f"drill-down for the {describe(source)}: responses and rubric aspects not shown, "
                         f"{first.removeprefix('prb: ')}{hint}")
            return rows
    return rows


def _row_number(pair_key: str) -> int | None:
    """The row number in ``<subset short>/<row number>``; None for other key shapes."""
    tail = pair_key.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else None


def pair_texts(entries: list[Entry], notes: list[str]) -> dict[tuple[str, str], PairText]:
    """(source, pair key) -> texts, for every pair of the logged entries.

    Args:
        entries: report entries with sample logs.
        notes: receives one line per data source whose texts could not be read.
    """
    wanted: dict[str, set[str]] = {}
    for entry in entries:
        for i, doc in enumerate(entry.docs):
            if doc.get("subset") in _BY_CONFIG and doc.get("id") is not None:
                wanted.setdefault(entry.source, set()).add(doc["subset"])
    rows = {source: _from_data(source, configs, notes) for source, configs in wanted.items()}
    texts: dict[tuple[str, str], PairText] = {}
    for entry in entries:
        for i, key in enumerate(entry.keys):
            text = texts.setdefault((entry.source, key), PairText())
            doc = entry.docs[i]
            subset, number = doc.get("subset"), _row_number(key)
            row = (rows.get(entry.source, {}).get((subset, number))
                   if isinstance(subset, str) and number is not None else None)
            if row is not None and text.chosen is None:
                text.question, text.chosen, text.rejected = row.question, row.chosen, row.rejected
                text.aspects = [{"aspect": a.aspect, "evidence": a.evidence, "reason": a.reason}
                                for a in row.rubric_aspects]
            if text.question is None and isinstance(doc.get("question"), str):
                text.question = doc["question"]
            pair = entry.responses[i]
            if text.chosen is None and pair is not None:
                text.chosen, text.rejected = pair
            if not text.aspects and isinstance(doc.get("rubric_aspects"), list):
                text.aspects = [a for a in doc["rubric_aspects"] if isinstance(a, dict)]
            if text.prompt is None and isinstance(doc.get("prompt"), str):
                text.prompt, text.prompt_chosen = doc["prompt"], doc.get("chosen_position")
    _add_custom(entries, texts, notes)
    return texts


def _custom_file(source: str) -> Path | None:
    from prb_tasks.data.custom.sources import example_path

    if source.startswith(LOCAL_PREFIX):
        return Path(source.removeprefix(LOCAL_PREFIX))
    return example_path() if source == SAMPLE or source.startswith("bundled:") else None


def _add_custom(entries: list[Entry], texts: dict[tuple[str, str], PairText], notes: list[str]) -> None:
    """Your own data: each preference's reason and the user's demographics, from the file."""
    from prb_tasks.data.custom.sources import stream_users

    sources = {e.source for e in entries if any(d.get("subset") == "custom" for d in e.docs[:1])}
    for source in sources:
        path = _custom_file(source)
        if path is None or not path.is_file():
            continue
        try:
            # A user at a time: only the reasons and demographics asked for are kept.
            for user in stream_users(str(path))[1]:
                for index, pref in enumerate(user.preferences):
                    text = texts.get((source, f"{user.user_id}/{index}"))
                    if text is not None:
                        text.reason = pref.reason or None
                        text.demographics = dict(user.demographics or {})
        except PRBError as exc:
            notes.append(f"drill-down: cannot read {path} for the users' reasons and demographics "
                         f"({str(exc).splitlines()[0]})")

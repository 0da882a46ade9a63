"""The PAIRS file of ``prb collect serve``: one JSON object per line.

Each line is ``{"prompt": ..., "response_A": ..., "response_B": ...}`` (optionally with
an ``"id"``), or only ``{"prompt": ...}`` when ``--generate`` writes the two answers.
A pair is checked with the same rules as a preference of the custom-data format, so
every answer a participant gives exports to a file ``personalized_custom`` accepts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from prb_tasks.data.custom.schema import Preference
from prb_tasks.data.errors import DataError
from prb_tasks.data.rawfiles import describe_error, raw_rows


@dataclass(frozen=True)
class Pair:
    """One prompt with its two answers, as the file names them.

    Attributes:
        pair_id: the row's ``id``, or ``line-<n>`` when it has none; keys the journal.
        prompt: the question the participant reads.
        response_A: the answer exported as ``response_A``.
        response_B: the answer exported as ``response_B``.
    """

    pair_id: str
    prompt: str
    response_A: str
    response_B: str


@dataclass(frozen=True)
class Prompt:
    """A prompt-only row (for ``--generate``)."""

    pair_id: str
    prompt: str


def _pair_id(row: dict, lineno: int, path: Path) -> str:
    raw = row.get("id", f"line-{lineno}")
    if not isinstance(raw, (str, int)) or isinstance(raw, bool) or not str(raw).strip():
        raise DataError(f"prb: {path} row {lineno}: field 'id' must be a non-blank string or integer")
    return str(raw).strip()


def read_prompts(path: Path) -> list[Prompt]:
    """The rows of a PAIRS file as prompts, answers ignored (for ``--generate``).

    Args:
        path: a ``.jsonl`` file, one object per line with at least ``prompt``.
    """
    prompts: list[Prompt] = []
    seen: dict[str, int] = {}
    for lineno, row in enumerate(_rows(path), start=1):
        pair_id = _pair_id(row, lineno, path)
        if pair_id in seen:
            raise DataError(f"prb: {path} row {lineno}: id {pair_id!r} repeats row {seen[pair_id]}; ids must be unique")
        seen[pair_id] = lineno
        prompt = row.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise DataError(f"prb: {path} row {lineno}: field 'prompt' must be a non-blank string")
        prompts.append(Prompt(pair_id, prompt))
    if not prompts:
        raise DataError(f"prb: {path} holds no rows; write one JSON object per line")
    return prompts


def read_pairs(path: Path) -> list[Pair]:
    """The validated pairs of a PAIRS file, in file order.

    Args:
        path: a ``.jsonl`` file, one ``{"prompt", "response_A", "response_B"}`` object per line.
    """
    pairs: list[Pair] = []
    for lineno, (prompt, row) in enumerate(zip(read_prompts(path), _rows(path)), start=1):
        missing = [k for k in ("response_A", "response_B") if k not in row]
        if missing:
            raise DataError(f"prb: {path} row {lineno}: no '{missing[0]}'; give both answers, "
                            "or only prompts with --generate MODEL_A,MODEL_B")
        try:
            checked = Preference.model_validate({**row, "prompt": prompt.prompt, "chosen_response": "response_A",
                                                 "reason": "", "value_alignment": []})
        except ValidationError as exc:
            raise DataError(f"prb: bad pair in {path} row {lineno}: {describe_error(exc)}; fix the file") from None
        pairs.append(Pair(prompt.pair_id, checked.prompt, checked.response_A, checked.response_B))
    return pairs


def _rows(path: Path):
    if path.suffix != ".jsonl":
        raise DataError(f"prb: {path}: expected a .jsonl file with one pair per line")
    if not path.exists():
        raise DataError(f"prb collect: no pairs file {path}; give a .jsonl file with one prompt and two answers "
                        "per line")
    return raw_rows(path)


def pairs_digest(pairs: list[Pair]) -> str:
    """A fingerprint of the pairs' content: a restarted server checks it still collects the same pairs."""
    text = json.dumps([[p.pair_id, p.prompt, p.response_A, p.response_B] for p in pairs], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

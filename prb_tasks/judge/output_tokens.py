"""What earlier answers of a judge cost in output tokens, read from its answer cache.

A dry run estimates the output tokens of requests not yet answered from the answers
already stored for the same model and the same :func:`~prb_tasks.judge.request.answer_profile`
(system prompt and generation settings): their mean is a far better guess than the
``max_tokens`` ceiling, which a judge writing one reasoning line and a verdict never
comes near.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prb_tasks.judge.answer_cache import _answer_of, _rows


@dataclass
class OutputHistory:
    """Output tokens of stored answers of one profile.

    Attributes:
        answers: stored answers that reported their output tokens.
        output_tokens: their sum.
    """

    answers: int = 0
    output_tokens: int = 0

    @property
    def mean(self) -> float:
        return self.output_tokens / self.answers if self.answers else 0.0


def output_history(directory: Path, model: str, profiles: set[str]) -> dict[str, OutputHistory]:
    """Per profile, the output tokens of answers stored in a cache folder.

    Reads the folder without locking or modifying it; entries that are not our JSON
    answers are skipped (never decoded otherwise).

    Args:
        directory: the judge cache folder.
        model: litellm model id the answers must come from.
        profiles: the profiles of interest.
    """
    found: dict[str, OutputHistory] = {p: OutputHistory() for p in profiles}
    if not profiles:
        return found
    for _rowid, key, raw, _stored, mode, filename, value in _rows(directory):
        if not raw or not isinstance(key, str):
            continue
        # Most entries belong to other judges or settings: skip them before parsing.
        if isinstance(value, str) and not any(p in value for p in profiles):
            continue
        answer = _answer_of(directory, mode, filename, value)
        if answer is None or answer.model != model or answer.profile not in found or answer.output_tokens is None:
            continue
        slot = found[answer.profile]
        slot.answers += 1
        slot.output_tokens += answer.output_tokens
    return found

"""One PersonalLLM prompt row: validated from the HF table's wide columns.

The HF table has one column per (response, reward model); validating the wide row
directly means an error names the exact column (``response_3_gemma_2b``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, StrictStr, create_model

from prb_tasks.data.personalllm.constants import N_RESPONSES, REWARD_MODELS, score_column


@dataclass(frozen=True)
class PromptRow:
    """A prompt, its eight responses and their raw rewards.

    Attributes:
        index: position of the row in the split (0-based; messages count rows from 1).
        prompt_id: the dataset's id of the prompt.
        subset: which source collection the prompt comes from (``subset`` column).
        prompt: the user's request.
        responses: the eight responses, ``response_1`` first.
        models: the model that wrote each response (None when the column is absent).
        scores: raw reward per response and reward model, in :data:`REWARD_MODELS`
            order; None where the table holds no number.
    """

    index: int
    prompt_id: str
    subset: str
    prompt: str
    responses: tuple[str, ...]
    models: tuple[Optional[str], ...]
    scores: tuple[tuple[Optional[float], ...], ...]

    @property
    def missing_scores(self) -> list[str]:
        """Columns of this row without a usable reward (null or NaN)."""
        return [
            score_column(i + 1, model)
            for i, row in enumerate(self.scores)
            for model, value in zip(REWARD_MODELS, row)
            if value is None
        ]


class _Base(BaseModel):
    # Extra columns (HF may add some) are tolerated.
    model_config = ConfigDict(extra="ignore", frozen=True)


@lru_cache(maxsize=1)
def wide_model() -> type[BaseModel]:
    """The pydantic model of one wide HF row (built once)."""
    fields: dict[str, Any] = {
        "prompt": (StrictStr, ...),
        "subset": (StrictStr, ...),
        "prompt_id": (Union[StrictStr, int], ...),
    }
    for i in range(1, N_RESPONSES + 1):
        fields[f"response_{i}"] = (StrictStr, ...)
        fields[f"response_{i}_model"] = (Optional[StrictStr], None)
        for model in REWARD_MODELS:
            fields[score_column(i, model)] = (Optional[float], ...)
    return create_model("PersonalLLMRow", __base__=_Base, **fields)


def _number(value: Optional[float]) -> Optional[float]:
    return None if value is None or math.isnan(value) else float(value)


def to_prompt_row(validated: BaseModel, index: int) -> PromptRow:
    """Turn a validated wide row into a :class:`PromptRow`."""
    data = validated.model_dump()
    return PromptRow(
        index=index,
        prompt_id=str(data["prompt_id"]),
        subset=data["subset"],
        prompt=data["prompt"],
        responses=tuple(data[f"response_{i}"] for i in range(1, N_RESPONSES + 1)),
        models=tuple(data[f"response_{i}_model"] for i in range(1, N_RESPONSES + 1)),
        scores=tuple(
            tuple(_number(data[score_column(i, m)]) for m in REWARD_MODELS)
            for i in range(1, N_RESPONSES + 1)
        ),
    )

"""One RewardBench 2 row, validated as allenai's loader reads it.

The hub table (``allenai/reward-bench-2``, split ``test``) has one row per prompt:
``chosen`` and ``rejected`` are lists of responses, ``num_correct`` counts the
correct ones and ``total_completions`` all of them. allenai's scorer concatenates
``chosen + rejected`` and treats position ``i`` as correct when ``i < num_correct``
(the Ties subset) or looks at position 0 alone (every other subset). Ties rows carry
ids ``ref:<n>`` (one correct answer) or ``tied:<n>`` (several), paired by ``<n>``.
Other columns (``models``, ``additional_metadata``...) are read by nobody and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

#: The subsets as the hub names them, in the order of the dataset card.
SUBSETS: tuple[str, ...] = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")
#: allenai's scorer switches to the Ties rules on ``subset.lower() == "ties"``.
TIES = "Ties"
TIE_KINDS = ("ref", "tied")


def subset_slug(subset: str) -> str:
    """The task-name form of a subset: ``Precise IF`` -> ``precise_if``."""
    return subset.lower().replace(" ", "_")


@dataclass(frozen=True)
class Row:
    """One prompt with its correct and incorrect responses.

    Attributes:
        index: position in the split (0-based; messages count from 1).
        id: the dataset's id (``ref:12`` / ``tied:12`` in Ties).
        subset: one of :data:`SUBSETS` (others are kept as given).
        prompt: the user's request.
        responses: ``chosen`` then ``rejected``, as allenai's loader unrolls them.
        num_correct: how many leading responses are correct.
    """

    index: int
    id: str
    subset: str
    prompt: str
    responses: tuple[str, ...]
    num_correct: int

    @property
    def is_ties(self) -> bool:
        """Scored by the Ties rules (allenai compares the lower-cased name)."""
        return self.subset.lower() == TIES.lower()


class RowModel(BaseModel):
    """The columns allenai's RewardBench 2 code reads; others are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: StrictStr | StrictInt
    prompt: StrictStr
    chosen: list[StrictStr] = Field(min_length=1)
    rejected: list[StrictStr] = Field(min_length=1)
    num_correct: StrictInt = Field(ge=1)
    total_completions: StrictInt
    subset: StrictStr = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> "RowModel":
        total = len(self.chosen) + len(self.rejected)
        if self.total_completions != total:
            raise ValueError(f"total_completions is {self.total_completions} but chosen + rejected hold {total} "
                             "responses")
        if self.num_correct >= total:
            raise ValueError(f"num_correct {self.num_correct} leaves no incorrect response among {total}")
        if self.subset.lower() == TIES.lower():
            kind, _, number = str(self.id).partition(":")
            if kind not in TIE_KINDS or not number.isdigit():
                raise ValueError(f"a Ties id must be 'ref:<n>' or 'tied:<n>' (got {self.id!r})")
            if kind == "tied" and self.num_correct < 2:
                raise ValueError("a 'tied:' row needs num_correct of 2 or more (the margin between correct "
                                 "answers is its point)")
        return self


def to_row(model: RowModel, index: int) -> Row:
    """The plain row of a validated one."""
    return Row(index, str(model.id), model.subset, model.prompt,
               tuple(model.chosen) + tuple(model.rejected), model.num_correct)


def row_label(item: Any) -> str:
    """How a raw row names itself in an error (its id when it has one)."""
    return f" (id {item.get('id')!r})" if isinstance(item, dict) and "id" in item else ""

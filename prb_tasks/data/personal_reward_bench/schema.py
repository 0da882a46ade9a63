"""One row of a PersonalRewardBench half as the hub stores it, validated at the boundary."""

from __future__ import annotations

from typing import Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator


class TurnRow(BaseModel):
    """One turn: ``{"role": ..., "content": ...}`` (other keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    role: str
    content: str


class BenchRowModel(BaseModel):
    """The columns prb reads; the rest (scores, the authors' judges' predictions) are ignored, as the
    authors' loaders drop them."""

    model_config = ConfigDict(extra="ignore")

    user_id: str = Field(min_length=1)
    split: Optional[str] = None
    context: Union[list[TurnRow], str] = Field(min_length=1)
    chosen: Union[TurnRow, list[TurnRow], str]
    rejected: Union[TurnRow, list[TurnRow], str]
    flip: Optional[bool] = None
    conversation_id: Optional[str] = None

    @field_validator("user_id", "conversation_id", mode="before")
    @classmethod
    def _id_text(cls, value: object) -> object:
        # Chatbot Arena's ids may be stored as numbers; pandas' groupby in the authors' code keeps
        # them as they are, prb reads them as text.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("chosen", "rejected")
    @classmethod
    def _not_empty(cls, value: object) -> object:
        if isinstance(value, list) and not value:
            raise ValueError("an empty list of turns; a response needs at least one turn")
        return value

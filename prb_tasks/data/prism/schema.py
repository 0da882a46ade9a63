"""Pydantic models of PRISM's rows, field names from the code book.

``survey.jsonl``: one row per participant (``user_id``, demographics such as ``age``,
``gender``, ``education``, the nested ``religion`` / ``ethnicity`` / ``location``
dictionaries, ``self_description``, ``system_string``). ``conversations.jsonl``: one row
per conversation (``conversation_id``, ``user_id``, ``conversation_type``,
``opening_prompt``, ``conversation_history``, ``open_feedback``). Each entry of
``conversation_history`` is a user turn (``turn``, ``role: "user"``, ``content``) or a
model response (``role: "model"``, ``content``, ``score`` 1-100, ``if_chosen``,
``within_turn_id``, ``model_name``, ``model_provider``). ``metadata.jsonl``: one row per text
of the release (``column_id`` names which: ``user_prompt``, ``model_response``,
``open_feedback``, ``self_description``, ``system_string``; the ids ``user_id``,
``conversation_id``, ``interaction_id``, ``utterance_id`` where they apply; ``language_flag``,
langid's code of the text's language; PII and moderation flags). Fields prb does not read are
ignored; the optional ones may be missing or null.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Optional, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)


class _Row(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class SurveyRow(_Row):
    """One participant's survey answers (the fields prb shows a profile-aware model)."""

    user_id: StrictStr = Field(min_length=1)
    num_completed_conversations: Optional[StrictInt] = None
    self_description: Optional[StrictStr] = None
    system_string: Optional[StrictStr] = None
    age: Optional[StrictStr] = None
    gender: Optional[StrictStr] = None
    education: Optional[StrictStr] = None
    employment_status: Optional[StrictStr] = None
    marital_status: Optional[StrictStr] = None
    english_proficiency: Optional[StrictStr] = None
    religion: Optional[dict[StrictStr, Any]] = None
    ethnicity: Optional[dict[StrictStr, Any]] = None
    location: Optional[dict[StrictStr, Any]] = None


class Turn(_Row):
    """One entry of ``conversation_history``: the person's message or one rated model response."""

    turn: StrictInt = Field(ge=0)
    role: Literal["user", "model"]
    content: StrictStr
    score: Optional[Union[StrictInt, StrictFloat]] = None
    if_chosen: Optional[StrictBool] = None
    within_turn_id: Optional[Union[StrictInt, StrictStr]] = None
    model_name: Optional[StrictStr] = None

    @field_validator("score")
    @classmethod
    def _on_the_scale(cls, value: Optional[float]) -> Optional[float]:
        # The participants rated on a slider of whole points from 1 to 100; NaN, inf, 1000 or 55.5 is
        # a broken file, and would give a gap no bucket or tie rule can read.
        if value is not None and (not math.isfinite(value) or value != int(value) or not 1 <= value <= 100):
            raise ValueError(f"{value!r} is not a score of PRISM's scale (whole points from 1 to 100)")
        return value

    @model_validator(mode="after")
    def _rated(self) -> "Turn":
        if self.role == "model" and (self.score is None or self.if_chosen is None):
            raise ValueError("a model response needs its score and if_chosen")
        return self


class ConversationRow(_Row):
    """One conversation: who had it, its turns with every rated response, the person's feedback."""

    conversation_id: StrictStr = Field(min_length=1)
    user_id: StrictStr = Field(min_length=1)
    conversation_type: Optional[StrictStr] = None
    conversation_history: list[Turn] = Field(min_length=1)
    open_feedback: Optional[StrictStr] = None
    #: After the opening turn: how much each attribute (values, fluency, ...) mattered in the choice, 1-100.
    choice_attributes: Optional[dict[StrictStr, Any]] = None
    included_in_balanced_subset: Optional[StrictBool] = None


class MetadataRow(_Row):
    """One text of ``metadata.jsonl``: which text it is and its detected language."""

    column_id: StrictStr = Field(min_length=1)
    conversation_id: Optional[StrictStr] = None
    language_flag: Optional[StrictStr] = None

"""Pydantic models for one benchmark row, matching the HF dataset's fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Strict(BaseModel):
    # Extra columns are tolerated (HF may add some), wrong types are not.
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class ProfilePost(_Strict):
    """One past post of the user."""

    category: str
    id: str
    text: str


class RubricAspect(_Strict):
    """One thing this user expects from an answer; the benchmark's scoring standard."""

    aspect: str
    evidence: str
    reason: str


class PRBRow(_Strict):
    """One preference pair: a question, the asker's profile and two answers."""

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    category: str
    profile: list[ProfilePost]
    rubric_aspects: list[RubricAspect]
    narrative: str
    chosen: str = Field(min_length=1)
    rejected: str = Field(min_length=1)

    @field_validator("chosen", "rejected", "question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @model_validator(mode="after")
    def _distinct_answers(self) -> "PRBRow":
        if self.chosen.strip() == self.rejected.strip():
            raise ValueError("chosen and rejected are the same text")
        return self

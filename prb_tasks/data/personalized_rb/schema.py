"""Pydantic models for one benchmark row, matching the HF dataset's fields.

Only structure is enforced here (every field present, every value of the right type):
that is what the original scripts need too. Rows they accept but that are odd
(repeated ids, identical answers, blank text) are kept and reported as warnings by
:mod:`prb_tasks.data.personalized_rb.checks`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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

    id: str
    question: str
    category: str
    profile: list[ProfilePost]
    rubric_aspects: list[RubricAspect]
    narrative: str
    chosen: str
    rejected: str

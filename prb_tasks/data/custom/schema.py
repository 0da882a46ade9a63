"""Pydantic models of the bring-your-own format.

One object per user::

    {"user_id": "u1", "demographics": {...}, "profile": "free text about the person",
     "preferences": [{"prompt": ..., "response_A": ..., "response_B": ...,
                      "chosen_response": "response_A" | "response_B",
                      "reason": ..., "value_alignment": ["honesty", ...]}, ...]}

``demographics``, ``profile`` (a text or a list of texts), ``reason`` and
``value_alignment`` may be left out; other keys are
ignored so files can carry extra bookkeeping.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class Preference(_Strict):
    """One comparison the user made, with why."""

    prompt: StrictStr
    response_A: StrictStr
    response_B: StrictStr
    chosen_response: Literal["response_A", "response_B"]
    reason: StrictStr = ""
    value_alignment: list[StrictStr] = Field(default_factory=list)

    @field_validator("prompt", "response_A", "response_B")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("value_alignment")
    @classmethod
    def _tags(cls, tags: list[str]) -> list[str]:
        cleaned = [t.strip() for t in tags]
        if any(not t for t in cleaned):
            raise ValueError("tags must not be blank")
        return list(dict.fromkeys(cleaned))  # keep order, drop repeats

    @model_validator(mode="after")
    def _distinct(self) -> "Preference":
        if self.response_A.strip() == self.response_B.strip():
            raise ValueError("response_A and response_B are the same text")
        return self

    @property
    def chosen(self) -> str:
        """Text of the response the user chose."""
        return self.response_A if self.chosen_response == "response_A" else self.response_B

    @property
    def rejected(self) -> str:
        """Text of the response the user did not choose."""
        return self.response_B if self.chosen_response == "response_A" else self.response_A

    @property
    def chosen_letter(self) -> str:
        """``A`` or ``B``: where the chosen response sits in the file."""
        return self.chosen_response[-1]


class UserRecord(_Strict):
    """A user: an id, optional demographics and profile text, and at least one preference."""

    user_id: Union[StrictStr, StrictInt]
    demographics: dict[StrictStr, Any] = Field(default_factory=dict)
    profile: Union[StrictStr, list[StrictStr]] = Field(default_factory=list)
    preferences: list[Preference] = Field(min_length=1)

    @field_validator("user_id")
    @classmethod
    def _id(cls, value: str | int) -> str:
        text = str(value).strip()
        if not text:
            raise ValueError("must not be blank")
        return text

    @field_validator("profile", mode="before")
    @classmethod
    def _profile(cls, value: Any) -> Any:
        # One message for both shapes, not pydantic's one per member of the union.
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return value
        raise ValueError("must be a text or a list of texts (free text about the person)")

    @property
    def profile_texts(self) -> tuple[str, ...]:
        """The non-blank ``profile`` texts, in the file's order."""
        texts = [self.profile] if isinstance(self.profile, str) else self.profile
        return tuple(t for t in texts if t.strip())

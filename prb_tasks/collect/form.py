"""The participant form: profile fields and value tags, from a small YAML file.

The bundled ``default_form.yaml`` asks for an age group, a region and interests; a
team passes its own with ``prb collect serve --form FILE``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from prb_tasks.common.errors import PRBError
from prb_tasks.data.rawfiles import describe_error

DEFAULT_FORM = Path(__file__).resolve().parent / "default_form.yaml"
# Keys of the exported "demographics" object; kept simple so they read well in prompts.
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_TEXT = 200  # characters of a profile answer


class FormError(PRBError):
    """A form YAML file that cannot be used."""


class ProfileField(BaseModel):
    """One question of the profile form."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str
    type: Literal["choice", "text"] = "text"
    choices: list[str] = Field(default_factory=list)
    required: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("use lower-case letters, digits and _ (e.g. age_group)")
        return value

    @model_validator(mode="after")
    def _choices(self) -> "ProfileField":
        if self.type == "choice" and not self.choices:
            raise ValueError("a choice field needs a non-empty 'choices' list")
        if self.type == "text" and self.choices:
            raise ValueError("'choices' applies to type: choice only")
        return self


class FormConfig(BaseModel):
    """The whole form: profile fields, then the value tags offered with each answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: list[ProfileField] = Field(default_factory=list)
    value_tags: list[str] = Field(default_factory=list)

    @field_validator("value_tags")
    @classmethod
    def _tags(cls, tags: list[str]) -> list[str]:
        cleaned = [t.strip() for t in tags]
        if any(not t for t in cleaned) or len(set(cleaned)) != len(cleaned):
            raise ValueError("tags must be non-blank and distinct")
        return cleaned

    @model_validator(mode="after")
    def _distinct(self) -> "FormConfig":
        names = [f.name for f in self.profile]
        if len(set(names)) != len(names):
            raise ValueError("two profile fields share a name")
        return self

    def clean_profile(self, submitted: dict[str, str]) -> tuple[dict[str, str], str | None]:
        """The profile answers kept, and the first problem for the participant (or None).

        Args:
            submitted: form values by field name (other keys are ignored).
        """
        kept: dict[str, str] = {}
        problems: list[str] = []
        for spec in self.profile:
            value = " ".join(str(submitted.get(spec.name, "")).split())[:MAX_TEXT]
            if spec.type == "choice" and value and value not in spec.choices:
                problems.append(f"{spec.label}: pick one of the listed options")
            elif spec.required and not value:
                problems.append(f"{spec.label}: please answer")
            elif value:
                kept[spec.name] = value
        # Every valid answer is kept, so the form shown again keeps what was typed.
        return kept, (problems[0] if problems else None)


def load_form(path: Path | None) -> FormConfig:
    """The form in ``path``, or the bundled default when None.

    Args:
        path: a YAML file with ``profile`` (a list of fields) and ``value_tags``.
    """
    where = path or DEFAULT_FORM
    try:
        raw = yaml.safe_load(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FormError(f"prb collect: cannot read form file {where}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0]
        raise FormError(f"prb collect: form file {where} is not valid YAML ({first})") from None
    if not isinstance(raw, dict):
        raise FormError(f"prb collect: form file {where} must be a mapping with 'profile' and 'value_tags'")
    try:
        return FormConfig.model_validate(raw)
    except ValidationError as exc:
        raise FormError(f"prb collect: form file {where}: {describe_error(exc)}") from None

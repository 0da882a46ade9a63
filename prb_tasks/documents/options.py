"""Parse a task family's ``--metadata`` options with pydantic, with one-line errors.

lm-eval hands a ``custom_dataset`` loader every ``--metadata`` key, every
``--model_args`` key and the task's own ``metadata`` block, all mixed together. Each
family declares its options as a pydantic model; only the keys that model defines
are read here (telling unknown keys apart from model arguments is the shared
``--metadata`` check's job).
"""

from __future__ import annotations

from typing import Any, Literal, Optional, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prb_tasks.common.suggest import did_you_mean
from prb_tasks.data.errors import DataError

Options = TypeVar("Options", bound=BaseModel)


class TemplateOptions(BaseModel):
    """The template options every family with prompts accepts; families add their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    templates: Optional[str] = Field(None, description="folder of replacement templates (same file names)")
    system_template: Optional[str] = Field(None, description="a file replacing the judge's system prompt")
    user_template: Optional[str] = Field(None, description="a file replacing the variant's user-message template")


def unused_templates(system: bool, user: bool) -> dict[str, str]:
    """The :class:`TemplateOptions` keys a variant never reads -> why (for
    :func:`~prb_tasks.documents.metadata.note_unused`).

    Args:
        system: whether the variant sends a judge system prompt (``system_template`` replaces it).
        user: whether it renders a user-message template (``user_template`` replaces it).
    """
    unused = {}
    if not system:
        unused["system_template"] = "it sends no judge system prompt"
    if not user:
        unused["user_template"] = "it renders no user-message template (the bare request is scored)"
        if not system:
            unused["templates"] = "it renders no template (the bare request is scored)"
    return unused


def option_keys(model: type[BaseModel]) -> frozenset[str]:
    """The ``--metadata`` keys a family's options model accepts."""
    return frozenset(model.model_fields)


def parse_options(model: type[Options], raw: dict[str, Any]) -> Options:
    """Validate the family's keys out of everything lm-eval passed.

    Args:
        model: the family's options model (its field names are the accepted keys).
        raw: keyword arguments the loader received.
    """
    keys = option_keys(model)
    picked = {key: value for key, value in raw.items() if key in keys and value not in (None, "")}
    try:
        return model.model_validate(picked)
    except ValidationError as exc:
        first = exc.errors()[0]
        if not first["loc"]:
            # A rule across keys (a model validator): its message names the keys itself.
            raise DataError(f"prb: --metadata: {first['msg'].removeprefix('Value error, ')}") from None
        name = ".".join(str(p) for p in first["loc"])
        given = picked.get(str(first["loc"][0]), first.get("input")) if first["loc"] else first.get("input")
        hint = did_you_mean(str(given), _literal_values(model, str(first["loc"][0]))) if isinstance(given, str) else ""
        raise DataError(f"prb: --metadata '{name}': {first['msg']} (got {given!r}){hint}") from None


def _literal_values(model: type[BaseModel], name: str) -> list[str]:
    # The values of a field typed Literal[...] (or Optional[Literal[...]]), for "did you mean" on a misspelt one.
    field = model.model_fields.get(name)
    if field is None:
        return []
    annotation = field.annotation
    if get_origin(annotation) is not Literal:
        annotation = next((a for a in get_args(annotation) if get_origin(a) is Literal), None)
    return [str(value) for value in get_args(annotation)] if annotation is not None else []

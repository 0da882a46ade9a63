"""One RM-Bench row, validated as the authors' scripts read it (THU-KEG/RM-Bench @73c52d7).

``total_dataset.json`` is a JSON array; each row has an ``id``, a ``prompt`` (one user
turn), three ``chosen`` and three ``rejected`` responses in the styles concise, detailed
plain text and detailed markdown (that order), and a ``domain``: ``chat``, ``code``,
``math``, ``safety-refuse`` or ``safety-response``. The authors' ``compute_accuracy``
splits rows by ``domain.startswith(d)`` for d in chat, math, code, safety, so both safety
sub-domains score as ``safety`` and a row of any other domain is never scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

#: The domains of the authors' compute_accuracy, in their order.
DOMAINS: tuple[str, ...] = ("chat", "math", "code", "safety")
#: The three styles, in the order of the chosen and rejected lists.
STYLES: tuple[str, ...] = ("concise", "detailed plain", "detailed markdown")


def domain_of(raw: str) -> str | None:
    """The scored domain of a row's ``domain`` (``safety-refuse`` -> ``safety``), or None."""
    return next((d for d in DOMAINS if raw.startswith(d)), None)


@dataclass(frozen=True)
class Row:
    """One prompt with its chosen and rejected responses in three styles.

    Attributes:
        index: position in the file (0-based; messages count from 1).
        id: the dataset's id.
        domain: the dataset's domain (``safety-refuse``), as given.
        prompt: the user's request.
        chosen, rejected: three responses each, in :data:`STYLES` order.
    """

    index: int
    id: str
    domain: str
    prompt: str
    chosen: tuple[str, str, str]
    rejected: tuple[str, str, str]


class RowModel(BaseModel):
    """The fields the authors' scripts read; others (``subset``, ``error``...) are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: StrictInt | StrictStr
    prompt: StrictStr
    chosen: list[StrictStr] = Field(min_length=3, max_length=3)
    rejected: list[StrictStr] = Field(min_length=3, max_length=3)
    domain: StrictStr = Field(min_length=1)


def to_row(model: RowModel, index: int) -> Row:
    """The plain row of a validated one."""
    return Row(index, str(model.id), model.domain, model.prompt, tuple(model.chosen),  # type: ignore[arg-type]
               tuple(model.rejected))  # type: ignore[arg-type]


def row_label(item: Any) -> str:
    """How a raw row names itself in an error (its id when it has one)."""
    return f" (id {item.get('id')!r})" if isinstance(item, dict) and "id" in item else ""

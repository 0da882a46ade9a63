"""What a judge or RM is shown about a user: earlier choices and demographics.

PersonalLLM users and bring-your-own users are both described this way, so the
same templates serve both families.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PastChoice:
    """An earlier comparison by the same user, as shown in a prompt.

    Attributes:
        prompt: the request the user made.
        response_a: the answer shown first.
        response_b: the answer shown second.
        chosen: ``A`` or ``B``: which of the two the user preferred.
        reason: why the user made this very choice (empty when unknown).
        feedback: what the user said about the whole conversation the comparison came from
            (PRISM's ``open_feedback``; empty when unknown): never shown as the reason of the choice.
    """

    prompt: str
    response_a: str
    response_b: str
    chosen: str
    reason: str = ""
    feedback: str = ""

    @property
    def chosen_text(self) -> str:
        """The answer the user preferred."""
        return self.response_a if self.chosen == "A" else self.response_b

    @property
    def rejected_text(self) -> str:
        """The answer the user passed over."""
        return self.response_b if self.chosen == "A" else self.response_a


@dataclass(frozen=True)
class Trait:
    """One demographic attribute, ready to print (``name: value``)."""

    name: str
    value: str


def traits(demographics: Mapping[str, Any]) -> list[Trait]:
    """Demographics as printable pairs, in the file's order; empty values are left out.

    Args:
        demographics: the user's attributes (values of any JSON type).
    """
    out: list[Trait] = []
    for name, value in demographics.items():
        if value is None or value == "" or value == [] or value == {}:
            continue
        if isinstance(value, str):
            text = value
        elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
            text = ", ".join(str(v) for v in value)
        elif isinstance(value, (int, float, bool)):
            text = str(value)
        else:
            text = json.dumps(value, ensure_ascii=False)
        out.append(Trait(str(name), " ".join(text.split())))
    return out


def profile_texts(history: list[PastChoice]) -> tuple[str, ...]:
    """What profile-based baselines (``bm25``, ``embedding``) treat as the user's own
    texts: each answer they preferred, followed by their reason when there is one."""
    return tuple(
        f"{choice.chosen_text}\n{choice.reason}".strip() if choice.reason else choice.chosen_text
        for choice in history
    )

"""What a scalar scorer sees for one response."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prb_tasks.prompts.prompt_store import doc_prompt


@dataclass(frozen=True)
class RMInput:
    """One response to score, in the benchmark's two-turn form.

    Attributes:
        prompt: the user turn (the question, plus selected posts in profile variants).
        response: the assistant turn being scored.
        profile_key: where the user's full profile can be looked up (None if unknown).
        question: the bare question (defaults to ``prompt`` when unknown).
        group: the run this response belongs to (the harness task), for scorers
            that batch each task separately (``protocol=official``).
        user_id: the user whose pair this is, where the data has user ids (a trained
            checkpoint refuses the users it trained on).
    """

    prompt: str
    response: str
    profile_key: str | None = None
    question: str | None = None
    group: str | None = None
    user_id: str | None = None

    @property
    def bare_question(self) -> str:
        """The question without any profile posts."""
        return self.question if self.question is not None else self.prompt


def from_request(doc: dict[str, Any] | None, context: str, continuation: str, idx: int,
                 group: str | None = None) -> RMInput:
    """Build the input for one lm-eval loglikelihood request.

    Prefers the raw fields of our own documents (so a chat template applied by lm-eval
    does not leak into the RM input); falls back to the request's own strings for
    other tasks.

    Args:
        doc: the request's document.
        context: the request's context string.
        continuation: the request's continuation string.
        idx: which choice this request scores.
        group: the request's task name.
    """
    if reads_document(doc, idx):
        assert doc is not None
        user = doc.get("user_id")
        return RMInput(doc_prompt(doc), doc["choices"][idx], doc.get("profile_key"), doc.get("question"), group,
                       None if user is None else str(user))
    return RMInput(context, continuation.strip(), None, group=group)


def reads_document(doc: Any, idx: int) -> bool:
    """Whether :func:`from_request` builds the input from ``doc``'s own fields, not the request's strings.

    True for one of our documents when ``idx`` is one of its choices.

    Args:
        doc: the request's document.
        idx: which choice the request scores.
    """
    return (isinstance(doc, dict) and "choices" in doc and ("prompt" in doc or "prompt_key" in doc)
            and 0 <= idx < len(doc["choices"]))

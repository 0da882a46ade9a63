"""The exact text a reward model reads for one response.

Official protocol: a two-turn chat ``[user: prompt, assistant: response]`` rendered
by the RM tokenizer's chat template. Tokenizers without a template get a fixed
plain-text layout instead (documented in :data:`PLAIN_LAYOUT`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from prb_tasks.rm.inputs import RMInput

InputFormat = Literal["chat", "plain", "pair"]

#: Layout used when the tokenizer has no chat template (``input_format=plain``).
#: The tokenizer's own special tokens (BOS, CLS/SEP, ...) are added around it.
PLAIN_LAYOUT = "User: {prompt}\n\nAssistant: {response}"


def messages(item: RMInput) -> list[dict[str, str]]:
    """The two chat turns of ``item``."""
    return [
        {"role": "user", "content": item.prompt},
        {"role": "assistant", "content": item.response},
    ]


def resolve_format(requested: str, has_template: bool) -> InputFormat:
    """The input format to use.

    Args:
        requested: ``auto``, ``chat``, ``plain`` or ``pair``.
        has_template: whether the tokenizer defines a chat template.
    """
    if requested == "auto":
        return "chat" if has_template else "plain"
    if requested == "chat" and not has_template:
        from prb_tasks.rm.errors import RMError

        raise RMError("prb-rm: input_format=chat but the tokenizer has no chat template; "
                      "use input_format=plain (or auto)")
    return requested  # type: ignore[return-value]


def render(item: RMInput, fmt: InputFormat, tokenizer: Any) -> str:
    """The formatted input text (for ``pair``: a JSON list of the two texts).

    Args:
        item: prompt and response.
        fmt: ``chat``, ``plain`` or ``pair``.
        tokenizer: a Hugging Face tokenizer (used for ``chat``).
    """
    if fmt == "chat":
        return tokenizer.apply_chat_template(messages(item), tokenize=False)
    if fmt == "plain":
        return PLAIN_LAYOUT.format(prompt=item.prompt, response=item.response)
    return json.dumps([item.prompt, item.response], ensure_ascii=False)

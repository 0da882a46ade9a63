"""Training pairs as RM texts, and batches of them as tensors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prb_tasks.fewshot.method import Pair, User
from prb_tasks.train.data import Example
from prb_tasks.train.text import context_text, rm_text


@dataclass(frozen=True)
class Rendered:
    """One pair as texts.

    Attributes:
        chosen: the chosen response's RM input.
        rejected: the rejected one's.
        user_index: the user's row in the seen-user table (-1: not a seen user).
        support: (chosen, rejected) RM inputs of the user's support pairs (latent only).
    """

    chosen: str
    rejected: str
    user_index: int = -1
    support: tuple[tuple[str, str], ...] = ()


def render_pair(pair: Pair, user: User, support: Sequence[Pair], architecture: str, options: dict[str, Any],
                tokenizer: Any, user_index: int = -1) -> Rendered:
    """``pair`` as the architecture reads it.

    Args:
        pair: the pair (prompt, chosen, rejected).
        user: its user.
        support: the user's pairs the model may read (not ``pair``).
        architecture: ``plain``, ``context``, ``latent`` or ``mixture``.
        options: the architecture's options (``input_format``, ``context_parts``, ``budget``).
        tokenizer: the backbone's tokenizer.
        user_index: the user's row in the seen-user table.
    """
    chat = options.get("input_format") == "chat"
    context = ""
    if architecture == "context":
        context = context_text(user, support, pair.prompt, options["context_parts"], options["budget"], tokenizer)
    shots: tuple[tuple[str, str], ...] = ()
    if architecture == "latent":
        shots = tuple((rm_text(tokenizer, p.prompt, p.chosen.text, chat=chat),
                       rm_text(tokenizer, p.prompt, p.rejected.text, chat=chat)) for p in support)
    return Rendered(rm_text(tokenizer, pair.prompt, pair.chosen.text, context, chat),
                    rm_text(tokenizer, pair.prompt, pair.rejected.text, context, chat), user_index, shots)


def render_examples(examples: Sequence[Example], architecture: str, options: dict[str, Any],
                    tokenizer: Any) -> list[Rendered]:
    """Every training pair as texts (see :func:`render_pair`)."""
    return [render_pair(e.pair, e.user, e.support, architecture, options, tokenizer, e.user_index)
            for e in examples]


class Collator:
    """Batches of :class:`Rendered` pairs as the models' keyword arguments.

    Args:
        tokenizer: the backbone's tokenizer (a pad token is set, right padding, left
            truncation so a long context loses its start, never the response).
        max_length: most tokens per input.
        chat: inputs were rendered with a chat template (no special tokens added again).
    """

    def __init__(self, tokenizer: Any, max_length: int, chat: bool = False) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.chat = chat

    def tokens(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """(input ids, attention mask) of ``texts``, right-padded."""
        import torch

        if not texts:
            return torch.zeros((0, 1), dtype=torch.long), torch.zeros((0, 1), dtype=torch.long)
        out = self.tokenizer(list(texts), truncation=True, max_length=self.max_length, padding=True,
                             return_tensors="pt", add_special_tokens=not self.chat)
        return out["input_ids"], out["attention_mask"]

    def __call__(self, batch: Sequence[Rendered]) -> dict[str, Any]:
        import torch

        chosen_ids, chosen_mask = self.tokens([r.chosen for r in batch])
        rejected_ids, rejected_mask = self.tokens([r.rejected for r in batch])
        owner = [n for n, r in enumerate(batch) for _ in r.support]
        s_chosen_ids, s_chosen_mask = self.tokens([c for r in batch for c, _ in r.support])
        s_rejected_ids, s_rejected_mask = self.tokens([x for r in batch for _, x in r.support])
        width = max(s_chosen_ids.shape[1], s_rejected_ids.shape[1])
        pad = self.tokenizer.pad_token_id

        def widen(t: Any, value: int) -> Any:
            return torch.nn.functional.pad(t, (0, width - t.shape[1]), value=value)

        return {
            "chosen_ids": chosen_ids, "chosen_mask": chosen_mask,
            "rejected_ids": rejected_ids, "rejected_mask": rejected_mask,
            "user_index": torch.tensor([r.user_index for r in batch], dtype=torch.long),
            "support_owner": torch.tensor(owner, dtype=torch.long),
            "support_owner_rows": torch.zeros(len(batch), dtype=torch.long),
            "support_chosen_ids": widen(s_chosen_ids, pad), "support_chosen_mask": widen(s_chosen_mask, 0),
            "support_rejected_ids": widen(s_rejected_ids, pad), "support_rejected_mask": widen(s_rejected_mask, 0),
        }


def prepare_tokenizer(tokenizer: Any) -> Any:
    """``tokenizer`` set up for reward modelling: a pad token (its EOS when it has none),
    right padding, left truncation."""
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    tokenizer.padding_side = "right"
    tokenizer.truncation_side = "left"
    return tokenizer

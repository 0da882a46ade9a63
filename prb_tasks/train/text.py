"""What the reward model reads: the user's context text and the formatted RM input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.fewshot.method import Pair, User
from prb_tasks.train.options import TrainError

#: Between the user's context and the request, in plain inputs.
SEPARATOR = "\n\n"


def parts_for(requested: Sequence[str] | None, users: Sequence[User], family: BenchmarkFamily) -> tuple[str, ...]:
    """The context parts a context model uses: those asked for (each must be in the data),
    or those the data has; one line when the data has none of them.

    Args:
        requested: ``--context-parts`` (None: what the data has).
        users: the seen users.
        family: the data's family (whether its users have a history; messages).
    """
    has = {"demographics": any(u.demographics for u in users), "profile": any(u.profile for u in users),
           "history": not family.one_pair_per_user}
    if requested is None:
        chosen = tuple(p for p in ("demographics", "history", "profile") if has[p])
        if not chosen:
            raise TrainError(f"prb train: the context model needs text about each user and {family.name} data has "
                             "none; use --architecture plain, or a file whose users have \"demographics\" or "
                             "\"profile\"")
        return chosen
    for part in requested:
        if not has[part]:
            why = family.users_have
            raise TrainError(f"prb train: --context-parts {part}: no seen user has {part}"
                             f"{' (' + why + ')' if why else ''}; leave it out, or give a file whose users have "
                             f"\"{part}\"")
    return tuple(requested)


def context_text(user: User, support: Sequence[Pair], query: str, parts: Sequence[str], budget: int,
                 tokenizer: Any) -> str:
    """The user's text for one RM input, at most ``budget`` tokens, each part a share and support
    pairs as summaries (:func:`~prb_tasks.train.budget.budgeted_context`).

    Args:
        user: the user (a part the user lacks is empty).
        support: pairs of the user the model may read (never the one being scored).
        query: the request being scored (ranks history and profile by relevance).
        parts: which sections.
        budget: most tokens.
        tokenizer: the backbone's tokenizer (measures the budget).
    """
    from prb_tasks.train.budget import budgeted_context

    return budgeted_context(user, support, query, parts, budget, token_measure(tokenizer)).text


def token_measure(tokenizer: Any) -> Any:
    """A text's tokens under ``tokenizer`` (no special tokens; no warning for a text longer than the
    model takes: a whole part is measured before it is cut to its share)."""
    return lambda text: len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def check_chat_template(tokenizer: Any, backbone: str) -> None:
    """One line when ``input_format chat`` meets a tokenizer without a chat template."""
    if not getattr(tokenizer, "chat_template", None):
        raise TrainError(f"prb train: the backbone '{backbone}' has no chat template; use --input-format plain, "
                         "or a backbone whose tokenizer has one")


def rm_text(tokenizer: Any, prompt: str, response: str, context: str = "", chat: bool = False) -> str:
    """One response as the RM reads it, the user's context (if any) before the request.

    Args:
        tokenizer: the backbone's tokenizer.
        prompt: the request.
        response: the response.
        context: the user's text (empty: none).
        chat: use the tokenizer's chat template (a user turn and an assistant turn).
    """
    request = f"{context}{SEPARATOR}{prompt}" if context else prompt
    if chat:
        return tokenizer.apply_chat_template([{"role": "user", "content": request},
                                              {"role": "assistant", "content": response}], tokenize=False)
    return f"User: {request}\nAssistant: {response}"

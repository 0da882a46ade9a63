"""What a method knows about a user, as one text within a budget.

For methods that put the person in a model's input (a context-conditioned reward model,
an in-context judge): :func:`user_text` renders a :class:`~prb_tasks.fewshot.method.User`
and the support pairs a method was handed into up to three sections, in this order of
priority:

1. ``demographics``: one ``- name: value`` line per attribute (the file's order);
2. ``history``: the support pairs, each with the request, the preferred and the other
   response, the user's reason and value tags, shown oldest first;
3. ``profile``: the user's free text (a custom file's ``profile``; Personalized
   RewardBench's posts), formatted as the benchmark's posts are.

Items are taken in priority order until the next one would pass the budget; that one is
cut at a word boundary to fill what is left, and nothing after it is added. Without a
query, history is kept most recent first and the profile in its own order; with a
``query`` (the request being scored), both are ranked by relevance to it: support pairs
by BM25 over their requests, profile texts by prb's post retrieval
(:func:`~prb_tasks.prompts.retrieval.rank_profiles`: ``bm25``, or ``embedding``, cached
like every ranking).

Only what is passed in is rendered: a user never carries labelled choices, so the text
holds the query pairs' labels and reasons only if a caller passes query pairs as
``support`` (the protocol never hands them to a method).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from prb_tasks.fewshot.method import Pair, Post, User, thaw
from prb_tasks.prompts.retrieval import DEFAULT_MAX_POST_CHARS, RETRIEVERS, truncate
from prb_tasks.prompts.user_history import traits

PARTS: tuple[str, ...] = ("demographics", "history", "profile")
HEADERS = {
    "demographics": "About the user:",
    "history": "The user's earlier choices (oldest first):",
    "profile": "Texts by or about the user:",
}
DEFAULT_BUDGET = 4000
# A cut item shorter than this says too little to be worth its header.
_MIN_CUT_CHARS = 40


def token_counter(tokenizer: Any) -> Callable[[str], int]:
    """A ``measure`` for :func:`user_text` counting a Hugging Face tokenizer's tokens
    (no special tokens), so the budget is in tokens.

    Args:
        tokenizer: anything called as ``tokenizer(text, add_special_tokens=False)``
            returning ``input_ids``.
    """
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def _pair_text(pair: Pair, max_item_chars: int) -> str:
    lines = [f"Request: {truncate(pair.prompt, max_item_chars)}",
             f"Preferred: {truncate(pair.chosen.text, max_item_chars)}",
             f"Over: {truncate(pair.rejected.text, max_item_chars)}"]
    if pair.reason.strip():
        lines.append(f"Why: {truncate(pair.reason, max_item_chars)}")
    if pair.values:
        lines.append(f"Values: {', '.join(pair.values)}")
    return "\n".join(lines)


def _post_text(rank: int, post: Post, max_item_chars: int) -> str:
    label = f"Post {rank} (Category: {post.category}):" if post.category else f"Post {rank}:"
    return f"{label}\n{truncate(post.text, max_item_chars)}"


def _history_order(support: Sequence[Pair], query: str | None) -> list[int]:
    """Support positions, most wanted first: the most recent, or the most relevant to ``query``."""
    if not query or len(support) < 2:
        return list(range(len(support)))[::-1]
    from prb_tasks.text.bm25 import BM25Index

    ranked = list(BM25Index([f"{p.prompt}\n{p.reason}" for p in support]).top_k(query, len(support)))
    return ranked + [i for i in range(len(support))[::-1] if i not in ranked]


def _profile_order(profile: Sequence[Post], query: str | None, retriever: str) -> list[int]:
    if not query or len(profile) < 2:
        return list(range(len(profile)))
    from prb_tasks.prompts.retrieval import rank_profiles

    (ranking,) = rank_profiles([(query, [p.text for p in profile])], retriever, progress=False)
    ranked = list(ranking)
    return ranked + [i for i in range(len(profile)) if i not in ranked]


def user_text(user: User, support: Sequence[Pair] = (), *, query: str | None = None,
              budget: int = DEFAULT_BUDGET, measure: Callable[[str], int] = len,
              parts: Sequence[str] = PARTS, retriever: str = "bm25",
              max_item_chars: int = DEFAULT_MAX_POST_CHARS) -> str:
    """The user's demographics, support choices and profile as one text of at most
    ``budget`` (measured by ``measure``); empty when there is nothing to say.

    Args:
        user: the user (``demographics`` and ``profile`` are read).
        support: the pairs the method was handed for this user, oldest first (``adapt``'s
            ``support``; a seen user's ``pairs``). Never pass query pairs.
        query: the request being scored; ranks history and profile by relevance to it.
        budget: the most characters (or, with :func:`token_counter`, tokens) returned.
        measure: the length of a text in budget units (``len``: characters).
        parts: which sections, in priority order (a subset of :data:`PARTS`).
        retriever: how profile texts are ranked for ``query``: ``bm25`` or ``embedding``.
        max_item_chars: longest text kept per response, reason or post (0: whole).
    """
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ValueError(f"user_text: unknown part {', '.join(map(repr, unknown))}; parts are {', '.join(PARTS)}")
    if retriever not in RETRIEVERS:
        raise ValueError(f"user_text: unknown retriever {retriever!r}; use one of {', '.join(RETRIEVERS)}")
    if budget < 1:
        raise ValueError(f"user_text: budget must be at least 1, not {budget}")
    # (part, display position, text) of every item, in priority order.
    items: list[tuple[str, int, str]] = []
    for part in parts:
        if part == "demographics":
            items += [(part, i, f"- {t.name}: {t.value}") for i, t in enumerate(traits(thaw(user.demographics)))]
        elif part == "history":
            items += [(part, i, _pair_text(support[i], max_item_chars)) for i in _history_order(support, query)]
        else:
            order = _profile_order(user.profile, query, retriever)
            items += [(part, rank, _post_text(rank + 1, user.profile[i], max_item_chars))
                      for rank, i in enumerate(order)]
    chosen: list[tuple[str, int, str]] = []
    for item in items:
        if measure(_render([*chosen, item], parts)) <= budget:
            chosen.append(item)
            continue
        cut = _cut_to_fit(chosen, item, parts, budget, measure)
        if cut is not None:
            chosen.append(cut)
        break
    return _render(chosen, parts)


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, line breaks kept."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _render(items: Sequence[tuple[str, int, str]], parts: Sequence[str]) -> str:
    blocks = []
    for part in parts:
        texts = [text for _, _, text in sorted(i for i in items if i[0] == part)]
        if texts:
            blocks.append(HEADERS[part] + "\n" + ("\n".join(texts) if part == "demographics" else "\n\n".join(texts)))
    return "\n\n".join(blocks)


def _cut_to_fit(chosen: list[tuple[str, int, str]], item: tuple[str, int, str], parts: Sequence[str],
                budget: int, measure: Callable[[str], int]) -> tuple[str, int, str] | None:
    """``item`` cut (at a word boundary) to the longest text that still fits; None if
    fewer than a few words would."""
    part, position, text = item
    low, high, best = _MIN_CUT_CHARS, len(text) - 1, None
    while low <= high:
        mid = (low + high) // 2
        candidate = (part, position, _cut(text, mid))
        if measure(_render([*chosen, candidate], parts)) <= budget:
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    return best

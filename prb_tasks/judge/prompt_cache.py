"""Provider prompt caching: which part of a request other requests of the run share.

Our judge templates put what the requests of a pair (both orders) or of one user
(several items) have in common first -- system rules, profile posts or history, the
question -- and what differs last (the responses). Providers bill a repeated prefix at a
reduced rate: OpenAI and Gemini find it themselves; Anthropic caches only up to a
``cache_control`` breakpoint that the request places, and only when the prefix is long
enough (1,024 tokens for most Claude models, 2,048 for Haiku models).

This module finds, for each request, the longest prefix of its last message that
another request of the run shares (sorted neighbours: the longest common prefix of a
text with any other text of a set is the one with a neighbour in sorted order), and
turns that into an Anthropic breakpoint. Nothing here changes the text sent: the
content is only split into two blocks at the shared boundary.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from prb_tasks.judge.request import Message

# Shortest prefix Anthropic caches (tokens): Haiku models need more.
ANTHROPIC_MIN_TOKENS = 1024
ANTHROPIC_HAIKU_MIN_TOKENS = 2048
# Shortest prefix OpenAI and Gemini cache automatically (tokens).
AUTOMATIC_MIN_TOKENS = 1024
# Characters per token when only an estimate is needed (to decide on a breakpoint).
CHARS_PER_TOKEN = 4


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # a[:low] == b[:low] and a[:high] != b[:high]
    while high - low > 1:
        mid = (low + high) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid
    return low


def shared_prefix_lengths(texts: Sequence[str]) -> list[int]:
    """For each text, the longest prefix it shares with any *other* text of ``texts``."""
    order = sorted(range(len(texts)), key=texts.__getitem__)
    out = [0] * len(texts)
    for rank in range(len(order) - 1):
        i, j = order[rank], order[rank + 1]
        common = common_prefix(texts[i], texts[j])
        out[i] = max(out[i], common)
        out[j] = max(out[j], common)
    return out


class PrefixIndex:
    """Texts seen so far; tells how much of a new text an earlier one shares (a cache read)."""

    def __init__(self) -> None:
        self._seen: list[str] = []

    def add(self, text: str) -> int:
        """Remember ``text``; return the longest prefix it shares with an earlier text."""
        common = self.shared(text)
        bisect.insort(self._seen, text)
        return common

    def shared(self, text: str) -> int:
        """The longest prefix ``text`` shares with a text remembered so far."""
        at = bisect.bisect_left(self._seen, text)
        return max((common_prefix(text, self._seen[i]) for i in (at - 1, at) if 0 <= i < len(self._seen)),
                   default=0)


def anthropic_min_tokens(model_id: str) -> int | None:
    """The shortest prefix Anthropic caches for this model (None: not an Anthropic model)."""
    if not model_id.startswith("anthropic/"):
        return None
    return ANTHROPIC_HAIKU_MIN_TOKENS if "haiku" in model_id.lower() else ANTHROPIC_MIN_TOKENS


def with_breakpoint(messages: Sequence[Message], shared_chars: int, min_tokens: int) -> list[dict[str, Any]]:
    """The messages with an Anthropic cache breakpoint after the shared part, if long enough.

    Args:
        messages: the request's messages (the shared part ends inside the last one).
        shared_chars: characters of the last message's content that another request shares.
        min_tokens: the model's shortest cacheable prefix.

    Returns:
        The messages as sent; the last one's content split into a shared block marked
        ``cache_control`` and the rest, when the shared prefix (earlier messages
        included) is estimated at ``min_tokens`` or more; otherwise unchanged.
    """
    out: list[dict[str, Any]] = [dict(m) for m in messages]
    if not out or shared_chars <= 0:
        return out
    last = out[-1]
    content = last["content"]
    before = sum(len(m["content"]) for m in messages[:-1])
    if (before + shared_chars) // CHARS_PER_TOKEN < min_tokens:
        return out
    blocks: list[dict[str, Any]] = [{"type": "text", "text": content[:shared_chars],
                                     "cache_control": {"type": "ephemeral"}}]
    if shared_chars < len(content):
        blocks.append({"type": "text", "text": content[shared_chars:]})
    last["content"] = blocks
    return out


def request_text(messages: Sequence[Message]) -> str:
    """The messages as one string, in the order a provider reads them (for prefix matching)."""
    return "\x00".join(f"{m['role']}:{m['content']}" for m in messages)


def cacheable_tokens(texts: Sequence[str], tokens: Sequence[int], min_tokens: int) -> tuple[int, int]:
    """Estimate prompt-cache reads and writes of requests sent in this order.

    A request reads from the cache the longest prefix it shares with an earlier request
    when that prefix reaches ``min_tokens``; the first request of a shared prefix writes
    it. Tokens of a prefix are the request's tokens in proportion to its characters.

    Args:
        texts: :func:`request_text` of each request, in sending order.
        tokens: each request's prompt tokens.
        min_tokens: the provider's shortest cacheable prefix.

    Returns:
        (tokens read from the cache, tokens written to it).
    """
    later = shared_prefix_lengths(texts)
    index = PrefixIndex()
    read = written = 0
    for text, count, shared_any in zip(texts, tokens, later):
        earlier = index.add(text)
        scale = count / len(text) if text else 0.0
        if earlier * scale >= min_tokens:
            read += round(earlier * scale)
        elif shared_any * scale >= min_tokens:
            written += round(shared_any * scale)
    return read, written

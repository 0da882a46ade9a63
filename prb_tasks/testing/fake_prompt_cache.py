"""The fake server's stand-in for the providers' prompt caches.

What it reports follows the providers' usage fields, with whitespace words as tokens:

* OpenAI-style (automatic): a request whose text starts like an earlier request's
  reports that common prefix as ``usage.prompt_tokens_details.cached_tokens`` once it
  reaches ``min_tokens`` (OpenAI's threshold is 1,024 tokens; its 128-token steps are
  not simulated). With ``after_reply`` only requests already answered when this one
  arrived count, as with a real provider, where requests sent together all miss.
* Anthropic-style (explicit): only content up to the last block marked with
  ``cache_control`` is cached. The first request with that prefix reports it as
  ``cache_creation_input_tokens``, later ones as ``cache_read_input_tokens``; both are
  left out of ``input_tokens``, as Anthropic does.
"""

from __future__ import annotations

import threading
from typing import Any

from prb_tasks.judge.prompt_cache import PrefixIndex, request_text

_SEPARATOR = "\x00"


def _words(text: str) -> int:
    return len(text.split())


def _block_texts(content: Any) -> list[tuple[str, bool]]:
    """(text, marked with cache_control) for each text block of a message's content."""
    if isinstance(content, str):
        return [(content, False)]
    out = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            out.append((block["text"], bool(block.get("cache_control"))))
    return out


class FakePromptCache:
    """Remembers prompts and says how much of a new one a provider would serve from cache.

    Args:
        min_tokens: shortest prefix (in whitespace words) that is cached.
        after_reply: OpenAI-style prefixes become readable once their request is
            answered (:meth:`openai_arrived` then :meth:`openai_answered`), not at once.
    """

    def __init__(self, min_tokens: int, after_reply: bool = False) -> None:
        self.min_tokens = min_tokens
        self.after_reply = after_reply
        self._seen = PrefixIndex()
        self._prefixes: set[str] = set()
        self._lock = threading.Lock()

    def openai(self, messages: list[dict[str, str]]) -> int:
        """Cached tokens of an OpenAI-style request (its normalized messages)."""
        text = request_text(messages)
        with self._lock:
            common = self._seen.add(text)
        tokens = _words(text[:common].replace(_SEPARATOR, " "))
        return tokens if tokens >= self.min_tokens else 0

    def openai_arrived(self, messages: list[dict[str, str]]) -> int:
        """Cached tokens of a request arriving now: what requests answered so far share."""
        text = request_text(messages)
        with self._lock:
            common = self._seen.shared(text)
        tokens = _words(text[:common].replace(_SEPARATOR, " "))
        return tokens if tokens >= self.min_tokens else 0

    def openai_answered(self, messages: list[dict[str, str]]) -> None:
        """Make a request's prefix readable for the requests arriving after its answer."""
        text = request_text(messages)
        with self._lock:
            self._seen.add(text)

    def anthropic(self, body: dict[str, Any]) -> tuple[int, int]:
        """(tokens read, tokens written) for an Anthropic Messages request body."""
        blocks: list[tuple[str, bool]] = []
        system = body.get("system")
        if system is not None:
            blocks += _block_texts(system)
        for message in body.get("messages") or []:
            if isinstance(message, dict):
                blocks += _block_texts(message.get("content"))
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        if not marks:
            return 0, 0
        prefix = _SEPARATOR.join(text for text, _ in blocks[:marks[-1] + 1])
        tokens = _words(prefix.replace(_SEPARATOR, " "))
        if tokens < self.min_tokens:
            return 0, 0
        with self._lock:
            if prefix in self._prefixes:
                return tokens, 0
            self._prefixes.add(prefix)
        return 0, tokens

"""Log-probabilities in the OpenAI chat shape, for the fake server's replies.

An OpenAI chat completion asked for ``logprobs: true`` (and ``top_logprobs: N``) carries
``choices[0].logprobs.content``: one entry per token of the reply, each with ``token``,
``logprob``, ``bytes`` (the token's UTF-8 bytes) and ``top_logprobs`` (the N likeliest
tokens at that position, most likely first, the same three fields each). The fake splits
its reply into word-sized tokens (a word with the white space before it, or one other
character), so the tokens joined are exactly the reply. Every token is sure of itself
except a verdict letter after a verdict keyword (``Result:``, ``verdict: [[``) or alone,
which gets the probability the server's ``confidence`` gives that reply, the other letter
most of the rest.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from typing import Any

_TOKENS = re.compile(r"\s*[A-Za-z]+|\s*[0-9]|\s*[^\sA-Za-z0-9]|\s+")
# What comes before a verdict letter: a verdict keyword and markup (`**Result:** `, `"choice": "`,
# `verdict: [[`), or nothing (a reply that is only the letter).
_VERDICT_LETTER = re.compile(r"(?:^|(?:result|verdict|choice)[\s*_:\"'\[]*)$", re.IGNORECASE)
# Filler alternatives, least likely last; never a verdict letter.
_FILLER = ("\n", " the", " is", ".", ",", " and", " to", " of", " it", " a", " in", " that", " for", " on", " with",
           " as", " this", " be", " at", " by")

Confidence = Callable[[str, str], float]
"""Maps ``(prompt, reply)`` to the probability of the reply's verdict letter (0.5 to 1)."""


def hashed_confidence(prompt: str, reply: str) -> float:
    """A reproducible confidence between 0.55 and 0.99 from the prompt (the default)."""
    digest = int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16)
    return 0.55 + (digest % 45) / 100


def _entry(token: str, probability: float) -> dict[str, Any]:
    return {"token": token, "logprob": math.log(max(probability, 1e-12)), "bytes": list(token.encode("utf-8"))}


def reply_logprobs(text: str, top: int, confidence: float) -> dict[str, Any]:
    """``choices[0].logprobs`` for a reply.

    Args:
        text: the reply.
        top: alternatives per token (``top_logprobs``; 0 gives none).
        confidence: probability of a verdict letter following ``Result:`` (the other letter gets
            90% of the rest).
    """
    content = []
    for match in _TOKENS.finditer(text):
        token = match.group(0)
        stripped = token.strip()
        if stripped in ("A", "B") and _VERDICT_LETTER.search(text[:match.start()]):
            other = token.replace(stripped, "B" if stripped == "A" else "A")
            ranked = [(token, confidence), (other, 0.9 * (1 - confidence))]
        else:
            ranked = [(token, 0.99)]
        # The rest of the probability spread over filler tokens, each less likely than the last.
        left = 1 - sum(p for _, p in ranked)
        fillers = [f for f in _FILLER if f not in {t for t, _ in ranked}]
        ranked += [(f, left / 2 ** (i + 1)) for i, f in enumerate(fillers[: max(0, top - len(ranked))])]
        entry = _entry(token, ranked[0][1])
        entry["top_logprobs"] = [_entry(t, p) for t, p in ranked[:top]]
        content.append(entry)
    return {"content": content, "refusal": None}

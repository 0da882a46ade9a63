"""Soft verdicts: the probability a judge gave each verdict letter where it wrote its verdict.

An OpenAI-compatible server asked for log-probabilities (``logprobs: true``,
``top_logprobs: N``) returns, for every token of the reply, its log-probability and those
of the N likeliest tokens at that position. The verdict position is the token holding
the letter that :func:`~prb_tasks.replies.verdict.parse_verdict` reads (the last
statement); there the probabilities of the tokens reading ``A`` and ``B`` (leading
whitespace ignored, so ``" A"`` and ``"A"`` both count) are summed and renormalised over
the two letters: ``p_first = P(A) / (P(A) + P(B))``. A letter absent from the top N counts
0. A reply without a readable verdict, or whose verdict token cannot be found among the
tokens, has no soft verdict.

The result travels with the reply text, so it survives lm-eval's string-only interface,
its request cache and the sample logs: a mark ``<think>[prb:verdict-probs ...]</think>``
put before the reply (``<think>[prb:verdict-probs none]</think>`` where the reply has none, so
it still counts as a pair without one). Every reader of verdicts drops reasoning up to the
last ``</think>`` (ours and the original script's), so the mark never changes a hard verdict.
Replies without any mark (a run without ``logprobs=``) give no soft metrics at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prb_tasks.replies.verdict import (
    _BARE_CHARS,
    _DOUBLE_BRACKET,
    _JSON_OBJECT,
    _KEY,
    _READING,
    _THINK_CLOSE,
    _THINK_OPEN,
    TAIL_CHARS,
    _json_reading,
    _reading,
    _whole_reading,
    parse_verdict,
)

MARK_OPEN = "<think>[prb:verdict-probs "
MARK_CLOSE = "]</think>\n"
#: Put before a reply to a request for log-probabilities that has no soft verdict (no readable
#: verdict, or its token not found): the reply still counts in the soft metrics' denominators.
NO_SOFT_MARK = f"{MARK_OPEN}none{MARK_CLOSE}"
# Around a letter inside one token (" A", "**B", "A."): not part of what it reads.
_AROUND = " \t\r\n*_`'\"()[]{}.:,!"
_MARK = re.compile(r"<think>\[prb:verdict-probs p_first=(?P<p>[0-9.eE+-]+) mass=(?P<mass>[0-9.eE+-]+)\]</think>")


@dataclass(frozen=True)
class SoftVerdict:
    """The verdict letters' probabilities at the verdict position of one reply.

    Attributes:
        p_first: P(A) / (P(A) + P(B)): the probability of position A's answer, given a verdict.
        mass: P(A) + P(B): how much of the model's probability went to a verdict letter at all.
    """

    p_first: float
    mass: float


def verdict_offset(completion: str) -> tuple[str, int] | None:
    """The verdict letter :func:`parse_verdict` reads and its offset in ``completion``; None without one.

    Args:
        completion: the judge's reply.
    """
    verdict = parse_verdict(completion)
    if verdict.letter is None:
        return None
    # The same text parse_verdict reads, keeping track of where it starts in the completion.
    start = 0
    for close in _THINK_CLOSE.finditer(completion):
        start = close.end()
    body = completion[start:]
    opened = _THINK_OPEN.search(body)
    body = body[:opened.start()] if opened else body
    lead = len(body) - len(body.lstrip())
    stripped = body.strip()
    cut = max(0, len(stripped) - TAIL_CHARS)
    text = stripped[cut:]
    base = start + lead + cut
    found: list[tuple[int, str, int]] = []
    read_until = 0
    for key in _KEY.finditer(text):
        if key.start() < read_until:
            continue
        match = _READING.match(text, key.end())
        reading = _reading(match)
        if reading and match is not None:
            letter_at = match.start("letter") if match["letter"] else -1
            found.append((key.start(), reading, letter_at))
            read_until = match.end()
    found.extend((m.start(), m.group(1).upper(), m.start(1)) for m in _DOUBLE_BRACKET.finditer(text))
    for m in _JSON_OBJECT.finditer(text):
        reading = _json_reading(m.group(0))
        if reading:
            found.append((m.end() - 1, reading, _letter_in(m.group(0), reading, m.start())))
    if found:
        _, reading, letter_at = max(found)
    elif len(text) <= _BARE_CHARS and _whole_reading(text) in ("A", "B"):
        match = _READING.match(text)
        reading, letter_at = verdict.letter, match.start("letter") if match is not None else -1
    else:
        return None
    if reading != verdict.letter or letter_at < 0:
        return None
    return verdict.letter, base + letter_at


def _letter_in(blob: str, letter: str, at: int) -> int:
    """Offset of the last standalone ``letter`` (either case) inside a JSON object starting at ``at``."""
    hits = [m.start() for m in re.finditer(rf"(?<![A-Za-z0-9]){letter}(?![A-Za-z0-9])", blob, re.IGNORECASE)]
    return at + hits[-1] if hits else -1


def _field(holder: Any, name: str) -> Any:
    return holder.get(name) if isinstance(holder, Mapping) else getattr(holder, name, None)


def _byte_length(item: Any) -> int:
    raw = _field(item, "bytes")
    if isinstance(raw, list):
        return len(raw)
    token = _field(item, "token")
    return len(token.encode("utf-8")) if isinstance(token, str) else 0


def soft_verdict(completion: str, tokens: Sequence[Any]) -> SoftVerdict | None:
    """The soft verdict of a reply from its tokens' log-probabilities; None when there is none.

    Args:
        completion: the reply text (hidden reasoning, when the server sent it apart, may
            come first in ``<think>``; the reply's own text is its end).
        tokens: ``choices[0].logprobs.content`` of the OpenAI reply: per token its ``token``,
            ``logprob``, ``bytes`` and ``top_logprobs`` (dicts or the SDK's objects).
    """
    located = verdict_offset(completion)
    if located is None or not tokens:
        return None
    letter, offset = located
    # The tokens end where the reply ends (they may also cover reasoning sent apart, which
    # comes first): the verdict token is found counting bytes back from the end.
    from_end = len(completion[offset:].encode("utf-8"))
    target = sum(_byte_length(t) for t in tokens) - from_end
    position = 0
    for item in tokens:
        size = _byte_length(item)
        if position <= target < position + size:
            return _letters(item, letter)
        position += size
    return None


def _letters(item: Any, letter: str) -> SoftVerdict | None:
    """The soft verdict at one token, if that token is the verdict letter."""
    token = _field(item, "token")
    if not isinstance(token, str) or token.strip(_AROUND).upper() != letter.upper():
        return None
    # A lower-case verdict ("Result: b") is weighed against the other lower-case letter.
    names = ("a", "b") if token.strip(_AROUND).islower() else ("A", "B")
    probs = {"A": 0.0, "B": 0.0}
    seen: set[str] = set()
    candidates = list(_field(item, "top_logprobs") or [])
    for entry in [*candidates, item]:
        text, logprob = _field(entry, "token"), _field(entry, "logprob")
        if not isinstance(text, str) or not isinstance(logprob, (int, float)) or text in seen:
            continue
        seen.add(text)
        key = text.strip(_AROUND)
        if key in names:
            probs["A" if key == names[0] else "B"] += math.exp(float(logprob))
    mass = probs["A"] + probs["B"]
    if mass <= 0:
        return None
    return SoftVerdict(p_first=probs["A"] / mass, mass=min(mass, 1.0))


def with_mark(text: str, soft: SoftVerdict) -> str:
    """``text`` with its soft verdict put before it (see the module docstring)."""
    return f"{MARK_OPEN}p_first={soft.p_first:.6f} mass={soft.mass:.6f}{MARK_CLOSE}{text}"


def has_mark(completion: object) -> bool:
    """Whether a reply answers a request for log-probabilities (it carries a mark, perhaps :data:`NO_SOFT_MARK`)."""
    return isinstance(completion, str) and MARK_OPEN in completion


def read_mark(completion: object) -> SoftVerdict | None:
    """The soft verdict a reply carries (the last mark: a re-ask's reply comes after the first); None without."""
    if not isinstance(completion, str) or MARK_OPEN not in completion:
        return None
    found = None
    for found in _MARK.finditer(completion):
        pass
    if found is None:
        return None
    try:
        p_first, mass = float(found["p"]), float(found["mass"])
    except ValueError:
        return None
    if not (0.0 <= p_first <= 1.0 and math.isfinite(mass)):
        return None
    return SoftVerdict(p_first, mass)

"""Constructed users in three taste groups, each group revealed through one field only.

Groups: ``brief`` (short, direct answers), ``detailed`` (long answers with background)
and ``formal`` (a polite answer that first asks a clarifying question). Every pair puts
the user's own style against one of the two others, so a model that ignores the user is
right on half the pairs (content-blind 50%), and one that knows the group on all of them
(less the ``noise`` share of flipped labels).

Each user reveals the group through one field, by user index (every group meets every field):

- ``demographics``: ``{"occupation": ...}``, an occupation of the group's (never a style word);
- ``profile``: posts in the group's voice (never a style word either);
- ``choices``: nothing but the choices themselves (and their ``reason``).

``shuffle`` breaks one field's link to the group: that field then follows a group drawn
at random for each user (for ``choices``, the user's pairs before the last ``queries``,
the support pool of the few-shot protocol, follow the random group; the queries keep the
user's own). A model that learned the field loses what it gained there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import numpy as np

GROUPS = ("brief", "detailed", "formal")
FIELDS = ("demographics", "profile", "choices")
OCCUPATIONS = (("nurse", "pilot"), ("professor", "archivist"), ("diplomat", "judge"))
POSTS = (("No time to read much. Get to the point.", "Lists? Just give me the answer."),
         ("I read every manual cover to cover.", "Give me the background and all the steps."),
         ("I always begin my letters with Dear Sir or Madam.", "Courtesy first, then business."))
REASONS = ("I want it short and direct.", "I like long answers with all the details.",
           "I prefer a polite answer that asks what I need first.")
TOPICS = ("a hat", "a boat", "the rain", "a garden", "a song", "the sea", "a train", "a book", "bread", "tea")
_ASKS = ("Tell me about {}.", "How do I start with {}?", "What should I know about {}?", "Explain {} to me.")
_FILLER = ("It also helps to note the history, the common mistakes and what experts suggest. "
           "Consider the costs, the time it takes and the tools you need. ")


def response(group: int, topic: str, long: int = 0) -> str:
    """The answer in ``group``'s style about ``topic``.

    Args:
        group: index into :data:`GROUPS`.
        topic: what the request is about.
        long: filler sentences appended (realistic answer lengths for budget tests).
    """
    text = (f"Brief: {topic}, in one line.",
            f"Detailed: {topic}, step by step, with background, examples and the reasons behind each point.",
            f"Formal: Dear user, before I answer about {topic}, may I ask what you need it for?")[group]
    return text + (" " + _FILLER * long if long else "")


def user_field(u: int) -> str:
    """Which field reveals user ``u``'s group."""
    return FIELDS[(u // len(GROUPS)) % len(FIELDS)]


def write_taste_users(path: Path, users: int = 36, pairs: int = 16, queries: int = 8, noise: float = 0.0,
                      shuffle: Optional[str] = None, seed: int = 0, long: int = 0) -> Path:
    """Write a preference file of ``users`` users with ``pairs`` pairs each.

    Args:
        path: the ``.jsonl`` file to write.
        users: how many (user ``u`` is in group ``u % 3``, revealed by :func:`user_field`).
        pairs: labelled pairs per user (the last ``queries`` are the protocol's queries).
        queries: the few-shot protocol's query pairs per user (for ``shuffle="choices"``).
        noise: share of labels flipped (seeded).
        shuffle: ``demographics``, ``profile`` or ``choices``: that field follows a random group.
        seed: seed of texts, noise and shuffles.
        long: filler sentences per answer.
    """
    if shuffle is not None and shuffle not in FIELDS:
        raise ValueError(f"shuffle: one of {', '.join(FIELDS)}, not {shuffle!r}")
    rng = np.random.default_rng(seed)
    lines = []
    for u in range(users):
        group, field = u % len(GROUPS), user_field(u)
        shown = int(rng.integers(len(GROUPS))) if shuffle == field else group
        prefs = []
        for n in range(pairs):
            taste = shown if field == "choices" and shuffle == "choices" and n < pairs - queries else group
            topic = TOPICS[rng.integers(len(TOPICS))]
            other = (taste + 1 + int(rng.integers(len(GROUPS) - 1))) % len(GROUPS)
            liked, disliked = (other, taste) if rng.random() < noise else (taste, other)
            first = bool(rng.integers(2))
            a, b = (liked, disliked) if first else (disliked, liked)
            prefs.append({"prompt": _ASKS[rng.integers(len(_ASKS))].format(topic),
                          "response_A": response(a, topic, long), "response_B": response(b, topic, long),
                          "chosen_response": "response_A" if first else "response_B",
                          "reason": REASONS[liked]})
        record: dict[str, Any] = {"user_id": f"t{u:03d}", "preferences": prefs}
        if field == "demographics":
            record["demographics"] = {"occupation": OCCUPATIONS[shown][u % 2]}
        if field == "profile":
            record["profile"] = list(POSTS[shown])
        lines.append(json.dumps(record))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

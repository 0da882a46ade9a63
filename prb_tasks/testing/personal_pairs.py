"""Constructed preference files where each user's choices follow a known attribute.

Every user has a favourite animal (``cats`` or ``dogs``, alternating by user so the two
groups are the same size). Every pair offers two responses that differ only in the
animal they are about; with ``signal`` the user picks their favourite, without it a
seeded coin does, so no method can do better than chance there. The favourite is in
the user's ``demographics`` (``{"pet": ...}``) and shows in their past choices, so a
context model, a latent model and a mixture can each find it; a non-personalized model
cannot (half the users want each).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

PETS = ("cats", "dogs")
_THINGS = ("a hat", "a boat", "the rain", "a garden", "a song", "the sea", "a train", "a book")
_ASKS = ("Tell me a short story.", "Write a few lines for a child.", "Say something nice.", "Describe a morning.")


def write_users(path: Path, users: int = 24, pairs: int = 16, signal: bool = True, seed: int = 0,
                demographics: bool = True) -> Path:
    """Write a preference file of ``users`` users with ``pairs`` pairs each.

    Args:
        path: the ``.jsonl`` file to write.
        users: how many users (half like cats, half dogs).
        pairs: labelled pairs per user.
        signal: the user picks their favourite (False: a seeded coin picks).
        seed: seed of the texts and coins.
        demographics: give each user ``{"pet": ...}``.
    """
    rng = np.random.default_rng(seed)
    lines = []
    for u in range(users):
        pet = PETS[u % 2]
        prefs = []
        for _ in range(pairs):
            thing = _THINGS[rng.integers(len(_THINGS))]
            texts = {p: f"A tale of {p} and {thing}." for p in PETS}
            liked = pet if signal else PETS[rng.integers(2)]
            other = PETS[1 - PETS.index(liked)]
            first = bool(rng.integers(2))  # which letter the chosen response has
            a, b = (texts[liked], texts[other]) if first else (texts[other], texts[liked])
            prefs.append({"prompt": _ASKS[rng.integers(len(_ASKS))], "response_A": a, "response_B": b,
                          "chosen_response": "response_A" if first else "response_B"})
        record: dict[str, Any] = {"user_id": f"u{u:03d}", "preferences": prefs}
        if demographics:
            record["demographics"] = {"pet": pet}
        lines.append(json.dumps(record))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path

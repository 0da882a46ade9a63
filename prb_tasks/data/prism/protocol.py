"""Which PRISM pairs a run builds: prb's default and the protocols of the people who publish on PRISM.

- ``prb`` (default): every turn, the chosen answer against each other rated answer, every gap kept.
- ``prism``: the authors' battles (``HannahKirk/prism-alignment``, ``src/data_analysis/ranking.py``,
  ``extract_battles``): the opening turn only, every pair among the rated answers (two answers the
  person did not choose too, labelled by their scores), ``|score difference| <= 5`` a tie. A tie has
  no label, so it is left out of the pairs and counted.
- ``lore``: LoRe (``facebookresearch/LoRe``, ``PRISM/prepare.py``): every turn, the chosen answer
  against each other answer, people with more than 5 conversations, the test half of each person's
  conversations (seed 123: 80% of people "seen", 20% "unseen"; each person's conversations shuffled
  and split 50/50), each pair tagged with its cohort (seen user: an unseen prompt of a person whose
  other conversations trained the model; unseen user).

Each preset is a set of the separate options below; an option given beside a preset overrides it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

Protocol = Literal["prb", "prism", "lore"]
PROTOCOLS: tuple[str, ...] = ("prb", "prism", "lore")
#: LoRe's constants (``PRISM/prepare.py``): the seed, the share of seen people, the share of a
#: person's conversations used for training, and "more than 5 conversations".
LORE_SEED = 123
LORE_SEEN = 0.8
LORE_TRAIN = 0.5
LORE_MIN_CONVERSATIONS = 6
#: The authors' tie threshold (``extract_battles(tie_thresh=5)``).
PRISM_TIE = 5


@dataclass(frozen=True)
class PrismProtocol:
    """The pairs one run builds from a PRISM copy (hashable: the reader's cache key).

    Attributes:
        turns: ``all`` or ``opening`` (the first turn of each conversation only).
        pairs: ``chosen`` (the chosen answer against each other one) or ``all`` (every pair among
            the rated answers, labelled by their scores; two unchosen answers of one score give no pair).
        tie: a pair whose ``|score difference|`` is at most this is a tie and left out (counted);
            None keeps every gap (gap 0: the person's pick between two equal scores).
        balanced: only conversations with ``included_in_balanced_subset`` true.
        min_conversations: only people with at least this many conversations that have a turn with
            a chosen and an unchosen answer (LoRe's count).
        conversations: ``all``, or LoRe's split of each person's conversations: ``train`` or ``test``.
        users: ``all``, or LoRe's split of people: ``seen`` or ``unseen``.
    """

    turns: Literal["all", "opening"] = "all"
    pairs: Literal["chosen", "all"] = "chosen"
    tie: int | None = None
    balanced: bool = False
    min_conversations: int = 0
    conversations: Literal["all", "train", "test"] = "all"
    users: Literal["all", "seen", "unseen"] = "all"

    @property
    def split(self) -> bool:
        """Whether LoRe's split of people and conversations is needed."""
        return self.conversations != "all" or self.users != "all"


PRESETS: dict[str, PrismProtocol] = {
    "prb": PrismProtocol(),
    "prism": PrismProtocol(turns="opening", pairs="all", tie=PRISM_TIE),
    "lore": PrismProtocol(min_conversations=LORE_MIN_CONVERSATIONS, conversations="test"),
}


def protocol_of(preset: str, **overrides: object) -> PrismProtocol:
    """A preset with the options given beside it (None: the preset's value).

    Args:
        preset: one of :data:`PROTOCOLS`.
        **overrides: :class:`PrismProtocol` fields.
    """
    given = {name: value for name, value in overrides.items() if value is not None}
    return replace(PRESETS[preset], **given)  # type: ignore[arg-type]


@dataclass(frozen=True)
class LoreSplit:
    """LoRe's split: each person's cohort and each conversation's half.

    Attributes:
        cohort: person -> ``seen`` or ``unseen`` (people with more than 5 conversations only).
        train: the conversations of the training half.
        test: the conversations of the test half.
    """

    cohort: dict[str, str]
    train: frozenset[str]
    test: frozenset[str]


def lore_split(people: Sequence[str], conversations: dict[str, list[str]]) -> LoreSplit:
    """LoRe's split, as ``PRISM/prepare.py`` draws it.

    Args:
        people: the people LoRe keeps, in ``survey.jsonl``'s order (those with a completed
            conversation, less those all of whose conversations have no qualified turn).
        conversations: person -> their qualified conversations in ``conversations.jsonl``'s order.
    """
    # One legacy RandomState seeded once, used in the script's order: the people, then each
    # kept person's conversations, seen people first. Shuffling numpy arrays as the script does.
    state = np.random.RandomState(LORE_SEED)
    ids = np.array(list(people))
    state.shuffle(ids)
    cut = int(len(ids) * LORE_SEEN)
    cohort: dict[str, str] = {}
    train: list[str] = []
    test: list[str] = []
    for name, group in (("seen", ids[:cut]), ("unseen", ids[cut:])):
        for person in group.tolist():
            mine = np.array(conversations.get(person, []))
            if len(mine) < LORE_MIN_CONVERSATIONS:
                continue
            cohort[person] = name
            state.shuffle(mine)
            half = int(len(mine) * LORE_TRAIN)
            train += mine[:half].tolist()
            test += mine[half:].tolist()
    return LoreSplit(cohort, frozenset(train), frozenset(test))

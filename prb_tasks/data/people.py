"""Real people's choices, as every family of individual human preferences gives them.

PRISM and Community Alignment store their data differently (a survey and nested
conversations; one wide CSV row per conversation), but once read both are the same
thing: people, each with what they told about themselves and the pairs of answers
they chose between. Their readers return :class:`Person` objects and one document
builder (:mod:`prb_tasks.documents.people`) turns those into tasks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from prb_tasks.common.textfiles import json_lines
from prb_tasks.data.errors import DataError
from prb_tasks.data.rawfiles import check_file, describe_error

# Rating-gap buckets (points on PRISM's 1-100 scale): how clear the preference was. Gap 0 stands
# apart: the person rated both answers the same and the tie was broken at random, a coin-flip label.
GAP_BUCKETS = ((0, "gap 0"), (1e-9, "gap 1-9"), (10, "gap 10-29"), (30, "gap 30+"))


#: Each ASCII byte, with those ``str.split()`` splits at (``str.isspace``: \x1c-\x1f too) made a space.
_TO_SPACE = bytes(32 if chr(code).isspace() else code for code in range(128)) + bytes(range(128, 256))


def _spaced(prompt: str) -> bytes:
    """``" ".join(prompt.split())`` in UTF-8; an ASCII prompt without a string per word (a later turn's
    prompt carries the conversation so far: at PRISM's release size splitting them was 0.4 s)."""
    if not prompt.isascii():
        return " ".join(prompt.split()).encode()
    spaced = prompt.encode("ascii").translate(_TO_SPACE)
    while b"  " in spaced:  # each pass halves every run of spaces
        spaced = spaced.replace(b"  ", b" ")
    return spaced.strip(b" ")


@lru_cache(maxsize=1024)
def _prompt_hash(prompt: str) -> Any:
    # sha256 over the spaced prompt and the separator, copied for each of the turn's pairs: a later turn's
    # prompt carries the conversation so far, hashed once a turn, not once a pair (nor joined to the answers).
    return hashlib.sha256(_spaced(prompt) + b"\x1f")


@dataclass(frozen=True, slots=True)
class Choice:
    """One labelled pair: the answer a person preferred and one they passed over.

    Attributes:
        key: unique within the data (``person/conversation/turn/rejected``).
        group: the conversation; choices of one conversation never appear in each
            other's history (a later turn continues with the chosen answer, and the
            other pairs of a turn share its chosen answer).
        interaction: the turn of the conversation the pair comes from.
        prompt: what the model was asked (earlier turns included, as the person saw them).
        chosen: the answer the person preferred.
        rejected: the other answer.
        reason: why the person made this very choice, where the data says ("" otherwise):
            Community Alignment's feedback on the turn; PRISM's ratings of what mattered in the
            choice (``choice_attributes``, asked after the opening turn only).
        feedback: what the person said about the whole conversation the pair comes from (PRISM's
            ``open_feedback``; "" otherwise): never about this choice alone.
        gap: the rating of chosen minus that of rejected (None where nothing was rated).
        language: the language of the exchange, where the data says ("" otherwise).
        chosen_first: whether the data itself listed the chosen answer before the rejected one.
        conversation_type: the kind of conversation, where the data says (PRISM: ``unguided``,
            ``values guided``, ``controversy guided``; "" otherwise).
        cohort: the protocol's group of the person, where it has one (LoRe: ``seen user``,
            ``unseen user``; "" otherwise).
    """

    key: str
    group: str
    interaction: str
    prompt: str
    chosen: str
    rejected: str
    reason: str = ""
    gap: float | None = None
    language: str = ""
    chosen_first: bool = False
    feedback: str = ""
    conversation_type: str = ""
    cohort: str = ""
    # Slots, not a __dict__ (a cached_property needs one): at release size a copy holds hundreds of
    # thousands of choices, and a __dict__ made to cache ``item`` cost about 100 bytes more each.
    _item: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def item(self) -> str:
        """What another person could have answered identically: the prompt and the two
        answers (in either order), hashed; the key of disagreement and majority counts."""
        held = self._item
        if held is None:
            first, second = sorted((self.chosen.strip(), self.rejected.strip()))
            # The sha256 of "\x1f".join((_spaced(self.prompt), first, second)), the prompt's part hashed once.
            digest = _prompt_hash(self.prompt).copy()
            digest.update(f"{first}\x1f{second}".encode())
            held = digest.hexdigest()[:16]
            object.__setattr__(self, "_item", held)  # computed once, on first use
        return held

    @property
    def gap_bucket(self) -> str:
        """``gap 0``, ``gap 1-9``, ``gap 10-29`` or ``gap 30+`` (by the absolute gap); ``no rating`` without one."""
        if self.gap is None:
            return "no rating"
        size = abs(self.gap)
        for low, name in reversed(GAP_BUCKETS):  # the last bucket whose floor the gap reaches
            if size >= low:
                return name
        raise IndexError("list index out of range")  # a NaN gap, as the list of buckets reached gave


@dataclass(frozen=True)
class Person:
    """One person and their choices, in the data's order.

    Attributes:
        person_id: the data's id of the person.
        demographics: attributes to show a profile-aware model (name -> value; empty values dropped).
        profile: texts the person wrote about themselves, each with a heading
            (``("Self-description", "...")``).
        country: where the person lives, for accuracy by country ("" when not known).
        choices: the labelled pairs.
    """

    person_id: str
    demographics: dict[str, Any]
    profile: tuple[tuple[str, str], ...]
    country: str
    choices: tuple[Choice, ...] = field(default_factory=tuple)


def clearest(choices: tuple[Choice, ...], exclude: str) -> list[Choice]:
    """One choice per turn (the largest rating gap; the first on a tie or without ratings), in
    the data's order: a turn's pairs share its chosen answer, so showing one as history or
    support would give another away.

    Args:
        choices: a person's choices.
        exclude: a conversation (``Choice.group``) to leave out ("" leaves none out).
    """
    best: dict[str, Choice] = {}
    for choice in choices:
        if choice.group == exclude:
            continue
        held = best.get(choice.interaction)
        if held is None or (choice.gap or 0) > (held.gap or 0):
            best[choice.interaction] = choice
    return list(best.values())


def transcript(earlier: list[tuple[str, str]], message: str) -> str:
    """The request of a turn as the person saw it: the conversation so far, then their message.

    Args:
        earlier: the earlier turns, each (the person's message, the answer it went on with).
        message: this turn's message.
    """
    if not earlier:
        return message
    lines = ["Conversation so far:"]
    for said, answer in earlier:
        lines += [f"Person: {said}", f"Assistant: {answer}"]
    return "\n".join(lines) + f"\n\nThe person's next message:\n{message}"


#: The longest row of a data file of real people read (PRISM's longest conversation is far under 1 MiB);
#: a line longer than this is a broken or wrong file, refused before it is read whole.
MAX_ROW_BYTES = 32 * 2**20


def rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON Lines file with their line numbers (one-line errors).

    Args:
        path: the ``.jsonl`` file.
    """
    check_file(path)
    for lineno, value in json_lines(path, "data file", "fix or remove the line", DataError, max_line=MAX_ROW_BYTES):
        if not isinstance(value, dict):
            raise DataError(f"prb: {path} line {lineno}: expected a JSON object, got {type(value).__name__}")
        yield lineno, value


def validated(model: type[BaseModel], value: dict[str, Any], path: Path, where: str) -> Any:
    """``value`` as ``model``, or one line naming the file, the row and the field.

    Args:
        model: the row's pydantic model.
        value: the raw row.
        path: the file, for the message.
        where: the row, for the message (``line 3 (conversation 'c1')``).
    """
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise DataError(f"prb: bad row in {path}, {where}: {describe_error(exc)}; fix the file") from None


def missing_copy(folder: Path, files: tuple[str, ...], family: str) -> DataError:
    """The one line for a folder that lacks a file of the hub layout.

    Args:
        folder: the folder given.
        files: what it must hold.
        family: the ``--family`` name, for the download command.
    """
    absent = [name for name in files if not (folder / name).is_file()]
    return DataError(f"prb: {folder} has no {' or '.join(absent)}; give the folder of a copy in the HF layout "
                     f"(`prb data download DIR --family {family}` makes one)")


def summary_lines(people: tuple[Person, ...] | list[Person], skipped: dict[str, int],
                  first_bad: dict[str, str] | None = None) -> list[str]:
    """What ``prb data validate`` prints about people and their pairs (each line under 120 columns).

    Args:
        people: the people read.
        skipped: turns that gave no pair, by why (``without responses``), and pairs or answers left out.
        first_bad: for a kind of row skipped as unreadable, where its first one is (printed under its count).
    """
    from collections import Counter

    from prb_tasks.common.terminal import fit_lines

    pairs = [c for p in people for c in p.choices]
    per_person = sorted(len(p.choices) for p in people)
    single = sum(n == 1 for n in per_person)
    buckets = Counter(c.gap_bucket for c in pairs)
    lines = [
        f"people with pairs: {len(people)} ({single} with a single pair, judged with no history); "
        f"pairs: {len(pairs)}, median {per_person[len(per_person) // 2]} per person",
        f"pairs with the person's own reason: {sum(bool(c.reason) for c in pairs)}; people without "
        f"demographics: {sum(not p.demographics for p in people)}, without a profile text: "
        f"{sum(not p.profile for p in people)}",
    ]
    if any(c.gap is not None for c in pairs):
        lines.append("by rating gap: " + ", ".join(f"{name} {n}" for name, n in sorted(buckets.items())))
    languages = Counter(c.language for c in pairs if c.language)
    if languages:
        lines.append("by language: " + ", ".join(f"{name} {n}" for name, n in languages.most_common()))
    # Keys naming pairs or answers ("pairs with ...") count what was left out; the others count turns without a pair.
    for why, n in sorted(skipped.items()):
        lines.append(f"left out: {n} {why}" if why.startswith(("pairs ", "answers "))
                     else f"turns that gave no pair: {n} {why}")
        if why in (first_bad or {}):
            lines.append(f"  the first: {(first_bad or {})[why]}")
    return fit_lines(lines, 118)

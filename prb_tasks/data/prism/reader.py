"""Read a local PRISM copy (its hub layout: ``survey.jsonl`` and ``conversations.jsonl`` at the
top of the folder, ``metadata.jsonl`` beside them where present) into people and their choices.

Each turn of a conversation is one decision: the person rated every response to their
message (1-100) and one response is marked ``if_chosen`` (the highest-rated one, with which
the conversation went on). The chosen response against each other response of the turn is a
labelled pair, with the rating gap kept. A turn without exactly one chosen response, or
whose responses are one text, gives no pair; it is counted, never guessed.

A pair's language is its conversation's: the language ``metadata.jsonl`` flags most of the
person's messages in that conversation with (its ``user_prompt`` rows; a tie: the language
flagged first). Without that file, or without a flag for the conversation, a pair has none.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prb_tasks.data.errors import DataError
from prb_tasks.data.people import Choice, Person, missing_copy, rows, transcript, validated
from prb_tasks.data.prism.constants import CONVERSATIONS, METADATA, REQUIRED, SURVEY
from prb_tasks.data.prism.schema import ConversationRow, MetadataRow, SurveyRow, Turn

FAMILY = "prism"


@dataclass(frozen=True)
class PrismCopy:
    """What a PRISM copy holds, as prb reads it.

    Attributes:
        people: the participants with at least one labelled pair, in survey order.
        surveyed: rows of ``survey.jsonl``.
        conversations: rows of ``conversations.jsonl``.
        skipped: turns that gave no pair, by why (``without responses``).
    """

    people: tuple[Person, ...]
    surveyed: int
    conversations: int
    skipped: Counter[str]


def _demographics(row: SurveyRow) -> dict[str, Any]:
    nested = {"religion": row.religion or {}, "ethnicity": row.ethnicity or {}, "location": row.location or {}}
    found = {
        "age": row.age, "gender": row.gender, "education": row.education,
        "employment status": row.employment_status, "marital status": row.marital_status,
        "English proficiency": row.english_proficiency,
        "religion": nested["religion"].get("categorised"), "ethnicity": nested["ethnicity"].get("categorised"),
        "country of birth": nested["location"].get("birth_country"),
        "country of residence": nested["location"].get("reside_country"),
    }
    return {name: value for name, value in found.items() if value not in (None, "")}


def _profile(row: SurveyRow) -> tuple[tuple[str, str], ...]:
    texts = (("Self-description", row.self_description),
             ("System prompt written for AI assistants", row.system_string))
    return tuple((name, text.strip()) for name, text in texts if text and text.strip())



def conversation_languages(path: Path) -> dict[str, str]:
    """Each conversation's language, from ``metadata.jsonl`` (see the module's docstring).

    Args:
        path: the copy's ``metadata.jsonl``.

    Raises:
        DataError: a bad row (one line: file, line, field).
    """
    flags: dict[str, Counter[str]] = {}
    for lineno, raw in rows(path):
        row = validated(MetadataRow, raw, path, f"line {lineno}")
        if row.column_id == "user_prompt" and row.conversation_id and row.language_flag:
            flags.setdefault(row.conversation_id, Counter())[row.language_flag] += 1
    # most_common keeps first-seen order among equal counts: a tie goes to the language flagged first.
    return {conv: counts.most_common(1)[0][0] for conv, counts in flags.items()}


def turn_choices(conv: ConversationRow, skipped: Counter[str], language: str = "") -> list[Choice]:
    """The labelled pairs of one conversation, turn by turn.

    Args:
        conv: the conversation.
        skipped: counts the turns that give no pair, by why (added to).
        language: the conversation's language ("" when unknown).
    """
    messages: dict[int, str] = {}
    responses: dict[int, list[Turn]] = {}
    for entry in conv.conversation_history:
        if entry.role == "user":
            messages[entry.turn] = entry.content
        else:
            responses.setdefault(entry.turn, []).append(entry)
    reason = (conv.open_feedback or "").strip()
    out: list[Choice] = []
    earlier: list[tuple[str, str]] = []
    for turn in sorted(messages):
        rated = responses.get(turn, [])
        chosen = [r for r in rated if r.if_chosen]
        # After the opening turn the data marks as chosen every response whose text is the one the
        # conversation went on with, so two identical texts are both marked: that is one answer.
        if len({r.content.strip() for r in chosen}) != 1:
            skipped["without exactly one chosen response" if rated else "without responses"] += 1
            break  # what followed continued from an answer we cannot name
        best = chosen[0]
        prompt = transcript(earlier, messages[turn])
        others = [r for r in rated if r is not best and r.content.strip() != best.content.strip()]
        if not others:
            skipped["whose responses are all one text"] += 1
        first = rated.index(best) == 0
        for position, other in enumerate(others):
            assert best.score is not None and other.score is not None  # the schema requires both
            rejected_id = other.within_turn_id if other.within_turn_id is not None else position
            out.append(Choice(
                key=f"{conv.user_id}/{conv.conversation_id}/{turn}/{rejected_id}",
                group=conv.conversation_id, interaction=f"{conv.conversation_id}/{turn}", prompt=prompt,
                chosen=best.content, rejected=other.content, reason=reason,
                gap=float(best.score - other.score), chosen_first=first, language=language,
            ))
        earlier.append((messages[turn], best.content))
    return out


def read_prism(folder: Path) -> PrismCopy:
    """Read and validate a PRISM copy.

    Args:
        folder: the copy's folder (``survey.jsonl`` and ``conversations.jsonl`` at its top;
            ``metadata.jsonl`` is read for the languages where present).

    Raises:
        DataError: a file is missing or a row is bad (one line: file, line, field).
    """
    if not all((folder / name).is_file() for name in REQUIRED):
        raise missing_copy(folder, REQUIRED, FAMILY)
    survey_path, conv_path = folder / SURVEY, folder / CONVERSATIONS
    surveys: dict[str, SurveyRow] = {}
    for lineno, raw in rows(survey_path):
        row = validated(SurveyRow, raw, survey_path, f"line {lineno}")
        if row.user_id in surveys:
            raise DataError(f"prb: bad row in {survey_path}, line {lineno}: field 'user_id': {row.user_id!r} "
                            "appears twice; keep one row per participant")
        surveys[row.user_id] = row
    languages = conversation_languages(folder / METADATA) if (folder / METADATA).is_file() else {}
    choices: dict[str, list[Choice]] = {}
    skipped: Counter[str] = Counter()
    count = 0
    for lineno, raw in rows(conv_path):
        conv_id = raw.get("conversation_id")
        where = f"line {lineno}" + (f" (conversation {conv_id!r})" if isinstance(conv_id, str) else "")
        conv = validated(ConversationRow, raw, conv_path, where)
        if conv.user_id not in surveys:
            raise DataError(f"prb: bad row in {conv_path}, {where}: field 'user_id': {conv.user_id!r} has no row in "
                            f"{survey_path.name}; use the survey and conversations files of one release")
        count += 1
        choices.setdefault(conv.user_id, []).extend(
            turn_choices(conv, skipped, languages.get(conv.conversation_id, "")))
    if not count:
        raise DataError(f"prb: {conv_path} holds no conversations")
    people = tuple(
        Person(uid, _demographics(row), _profile(row), str((row.location or {}).get("reside_country") or ""),
               tuple(choices[uid]))
        for uid, row in surveys.items() if choices.get(uid)
    )
    if not people:
        raise DataError(f"prb: {conv_path}: no conversation has a turn with a chosen and another response")
    return PrismCopy(people, len(surveys), count, skipped)

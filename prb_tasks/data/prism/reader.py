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

import os
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prb_tasks.data.counts import row_problems
from prb_tasks.data.errors import DataError
from prb_tasks.data.people import Choice, Person, missing_copy, rows, transcript, validated
from prb_tasks.data.prism.constants import CONVERSATIONS, METADATA, REQUIRED, SURVEY
from prb_tasks.data.prism.protocol import PRESETS, PrismProtocol, lore_split
from prb_tasks.data.prism.schema import ConversationRow, MetadataRow, SurveyRow, Turn
from prb_tasks.data.rawfiles import check_file

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
        column, conv, flag = raw.get("column_id"), raw.get("conversation_id"), raw.get("language_flag")
        # The three fields read, as MetadataRow takes them when plainly valid (a row per text: 106,794 at
        # release size, where the model cost more than the rest of reading the file); otherwise the model
        # says what is wrong in one line, or takes what its own rules allow. An ASCII column_id: the model cannot
        # measure a text holding half a surrogate pair (a JSON escape such as "\ud800"), which it refuses.
        if not (type(column) is str and column and column.isascii() and (conv is None or type(conv) is str)
                and (flag is None or type(flag) is str)):
            row = validated(MetadataRow, raw, path, f"line {lineno}")
            column, conv, flag = row.column_id, row.conversation_id, row.language_flag
        if column == "user_prompt" and conv and flag:
            flags.setdefault(conv, Counter())[flag] += 1
    # most_common keeps first-seen order among equal counts: a tie goes to the language flagged first.
    return {conv: counts.most_common(1)[0][0] for conv, counts in flags.items()}


#: The release's placeholder for an empty answer (147 of its 68,371 responses): never an answer to rank.
EMPTY_MARK = "EMPTY STRING"
#: How ``skipped`` names the pairs left out (they are counted, never scored).
PLACEHOLDER = "pairs with the release's \"EMPTY STRING\" placeholder for an empty answer"
TIED = "pairs within the protocol's tie threshold (|score difference| at most the tie)"
UNLABELLED = "pairs of two unchosen answers rated the same (no label)"


def _what_mattered(attributes: dict[str, Any] | None) -> str:
    """PRISM's ``choice_attributes`` as a sentence: the ratings of what mattered in the choice."""
    rated = [(name, value) for name, value in (attributes or {}).items()
             if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value]
    if not rated:
        return ""
    rated.sort(key=lambda kv: -kv[1])
    return ("How much each quality mattered in this choice, 1-100: "
            + ", ".join(f"{name} {value:g}" for name, value in rated))


def _rank_pairs(rated: list[Turn], best: Turn, protocol: PrismProtocol,
                skipped: Counter[str]) -> list[tuple[Turn, Turn]]:
    """(preferred, other) pairs of one turn's answers under ``protocol``; those left out are counted.

    Two answers of one text are never a pair (nobody could tell them apart); an answer with the
    chosen one's text is the chosen answer.
    """
    stripped = {id(response): response.content.strip() for response in (*rated, best)}

    def text(response: Turn) -> str:
        return stripped[id(response)]

    if protocol.pairs == "chosen":
        candidates = [(best, other, True) for other in rated if other is not best and text(other) != text(best)]
    else:
        candidates = []
        for i, one in enumerate(rated):
            for two in rated[i + 1:]:
                if text(one) == text(two):
                    continue
                assert one.score is not None and two.score is not None  # the schema requires both
                win, lose = one, two
                if text(two) == text(best) or (text(one) != text(best) and two.score > one.score):
                    win, lose = two, one
                # Two unchosen answers rated the same: the person never said which they preferred.
                labelled = text(win) == text(best) or win.score != lose.score
                candidates.append((best if text(win) == text(best) else win, lose, labelled))
    out = []
    for win, lose, labelled in candidates:
        if EMPTY_MARK in (text(win), text(lose)):
            skipped[PLACEHOLDER] += 1
        elif protocol.tie is not None and abs(float(win.score or 0) - float(lose.score or 0)) <= protocol.tie:
            skipped[TIED] += 1
        elif not labelled:
            skipped[UNLABELLED] += 1
        else:
            out.append((win, lose))
    return out


def turn_choices(conv: ConversationRow, skipped: Counter[str], language: str = "",
                 protocol: PrismProtocol = PRESETS["prb"]) -> list[Choice]:
    """The labelled pairs of one conversation, turn by turn.

    Args:
        conv: the conversation.
        skipped: counts the turns that give no pair and the pairs left out, by why (added to).
        language: the conversation's language ("" when unknown).
        protocol: which turns and pairs to build.
    """
    messages: dict[int, str] = {}
    responses: dict[int, list[Turn]] = {}
    for entry in conv.conversation_history:
        if entry.role == "user":
            messages[entry.turn] = entry.content
        else:
            responses.setdefault(entry.turn, []).append(entry)
    feedback = (conv.open_feedback or "").strip()
    out: list[Choice] = []
    earlier: list[tuple[str, str]] = []
    for turn in sorted(messages):
        if protocol.turns == "opening" and earlier:
            break
        rated = responses.get(turn, [])
        chosen = [r for r in rated if r.if_chosen]
        # After the opening turn the data marks as chosen every response whose text is the one the
        # conversation went on with, so two identical texts are both marked: that is one answer.
        if len({r.content.strip() for r in chosen}) != 1:
            skipped["without exactly one chosen response" if rated else "without responses"] += 1
            break  # what followed continued from an answer we cannot name
        best = chosen[0]
        prompt = transcript(earlier, messages[turn])
        best_text = best.content.strip()
        if not any(r.content.strip() != best_text for r in rated):
            skipped["whose responses are all one text"] += 1
        # The choice attributes were asked after the opening turn, about its choice only.
        reason = _what_mattered(conv.choice_attributes) if not earlier else ""
        # The chosen answer's pairs keep prb's keys (the rejected answer's id, else its place among the others).
        others = [r for r in rated if r is not best and r.content.strip() != best_text]
        interaction = f"{conv.conversation_id}/{turn}"  # one string for the turn's pairs
        for win, lose in _rank_pairs(rated, best, protocol, skipped):
            assert win.score is not None and lose.score is not None  # the schema requires both
            # The answers' order in the data was random: the pair's two positions say which came first.
            first = _place(rated, win) < _place(rated, lose)
            if win is best:
                pair_id = _position(lose, others)
            else:
                pair_id = f"{_position(win, rated)}>{_position(lose, rated)}"
            out.append(Choice(
                key=f"{conv.user_id}/{conv.conversation_id}/{turn}/{pair_id}",
                group=conv.conversation_id, interaction=interaction, prompt=prompt,
                chosen=win.content, rejected=lose.content, reason=reason if win is best else "",
                gap=float(win.score - lose.score), chosen_first=first, language=language, feedback=feedback,
                conversation_type=conv.conversation_type or "",
            ))
        earlier.append((messages[turn], best.content))
    return out


def _position(response: Turn, among: list[Turn]) -> str:
    return str(response.within_turn_id if response.within_turn_id is not None else _place(among, response))


def _place(among: list[Turn], response: Turn) -> int:
    """``among.index(response)``: the first answer that is ``response`` or equal to it, without comparing
    pydantic models field by field where their texts already differ (equal answers have equal texts)."""
    for place, other in enumerate(among):
        if other is response or (other.content == response.content and other == response):
            return place
    raise ValueError(f"{response!r} is not in the list")


def _qualified(conv: ConversationRow) -> bool:
    """LoRe's test of a conversation: some turn has the person's message, a chosen and an unchosen answer."""
    users = {e.turn for e in conv.conversation_history if e.role == "user"}
    chosen = {e.turn for e in conv.conversation_history if e.role == "model" and e.if_chosen}
    other = {e.turn for e in conv.conversation_history if e.role == "model" and not e.if_chosen}
    return bool(users & chosen & other)


def check_layout(folder: Path) -> None:
    """Refuse (one line naming the download command) a folder without PRISM's files; reads no row.

    Args:
        folder: the copy's folder.
    """
    for name in REQUIRED:
        # A named pipe or a device in a file's place is named as what it is (check_file), never "missing".
        if not (folder / name).is_file() and not os.path.lexists(folder / name):
            raise missing_copy(folder, REQUIRED, FAMILY)


def read_prism(folder: Path, protocol: PrismProtocol = PRESETS["prb"]) -> PrismCopy:
    """Read and validate a PRISM copy.

    Args:
        folder: the copy's folder (``survey.jsonl`` and ``conversations.jsonl`` at its top;
            ``metadata.jsonl`` is read for the languages where present).
        protocol: which pairs to build (:mod:`~prb_tasks.data.prism.protocol`; default: prb's).

    Raises:
        DataError: a file is missing or a row is bad (one line: file, line, field).
    """
    check_layout(folder)
    for name in REQUIRED:
        check_file(folder / name)
    survey_path, conv_path = folder / SURVEY, folder / CONVERSATIONS
    surveys: dict[str, SurveyRow] = {}
    for lineno, raw in rows(survey_path):
        row = validated(SurveyRow, raw, survey_path, f"line {lineno}")
        if row.user_id in surveys:
            raise DataError(f"prb: bad row in {survey_path}, line {lineno}: field 'user_id': {row.user_id!r} "
                            "appears twice; keep one row per participant")
        surveys[row.user_id] = row
    languages = conversation_languages(folder / METADATA) if (folder / METADATA).is_file() else {}
    by_person: dict[str, list[tuple[ConversationRow, list[Choice]]]] = {}
    skipped: Counter[str] = Counter()
    seen: list[tuple[int, str, str]] = []
    count = 0
    for lineno, raw in rows(conv_path):
        conv_id = raw.get("conversation_id")
        where = f"line {lineno}" + (f" (conversation {conv_id!r})" if isinstance(conv_id, str) else "")
        conv = validated(ConversationRow, raw, conv_path, where)
        if conv.user_id not in surveys:
            raise DataError(f"prb: bad row in {conv_path}, {where}: field 'user_id': {conv.user_id!r} has no row in "
                            f"{survey_path.name}; use the survey and conversations files of one release")
        count += 1
        seen.append((lineno - 1, CONVERSATIONS, conv.conversation_id))
        if protocol.balanced and not conv.included_in_balanced_subset:
            continue
        by_person.setdefault(conv.user_id, []).append(
            (conv, turn_choices(conv, skipped, languages.get(conv.conversation_id, ""), protocol)))
    # A conversation twice would count its pairs twice and put one conversation in another's history.
    repeated = row_problems(conv_path, seen, "file", lambda _: True, "")
    if repeated:
        raise DataError(repeated[0].replace("(rows ", "(lines ", 1) + (f" ({len(repeated) - 1} more ids repeat)"
                                                                   if len(repeated) > 1 else ""))
    if not count:
        raise DataError(f"prb: {conv_path} holds no conversations")
    choices = _select(surveys, by_person, protocol, skipped)
    people = tuple(
        Person(uid, _demographics(row), _profile(row), str((row.location or {}).get("reside_country") or ""),
               tuple(choices[uid]))
        for uid, row in surveys.items() if choices.get(uid)
    )
    if not people:
        raise DataError(f"prb: {conv_path}: no conversation has a turn with a chosen and another response"
                        + ("" if protocol == PRESETS["prb"] else " under the options given"))
    return PrismCopy(people, len(surveys), count, skipped)


def _select(surveys: dict[str, SurveyRow], by_person: dict[str, list[tuple[ConversationRow, list[Choice]]]],
            protocol: PrismProtocol, skipped: Counter[str]) -> dict[str, list[Choice]]:
    """Each person's pairs after the protocol's choice of people and conversations."""
    qualified = {uid: [conv.conversation_id for conv, _ in convs if _qualified(conv)]
                 for uid, convs in by_person.items()}
    split = None
    if protocol.split:
        # LoRe's people: those with a completed conversation, less those with no qualified one.
        kept = [uid for uid, row in surveys.items() if row.num_completed_conversations != 0
                and (qualified.get(uid) or not by_person.get(uid))]
        split = lore_split(kept, qualified)
    out: dict[str, list[Choice]] = {}
    for uid, convs in by_person.items():
        if len(qualified[uid]) < protocol.min_conversations:
            skipped[f"pairs of people with fewer than {protocol.min_conversations} conversations"] += sum(
                len(c) for _, c in convs)
            continue
        cohort = ""
        if split is not None:
            cohort = split.cohort.get(uid, "")
            half = {"all": split.train | split.test, "train": split.train, "test": split.test}[protocol.conversations]
            if not cohort or protocol.users not in ("all", cohort):
                continue
            convs = [(conv, c) for conv, c in convs if conv.conversation_id in half]
        picked = [c for _, pairs in convs for c in pairs]
        out[uid] = [replace(c, cohort=f"{cohort} user") for c in picked] if cohort else picked
    return out

"""Write small PRISM copies in the exact HF layout (``survey.jsonl``, ``conversations.jsonl``,
``utterances.jsonl``, ``metadata.jsonl`` at the top of the folder), rows shaped as the authors'
``src/data_processing/process_conversations.py`` writes them (field names and types from the
code book)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def survey_row(user_id: str, full: bool = True, **extra: Any) -> dict[str, Any]:
    """One participant; ``full=False`` leaves the optional answers out or null, as the release does
    for the questions a participant skipped."""
    row: dict[str, Any] = {"user_id": user_id, "survey_only": False, "num_completed_conversations": 2,
                           "consent": "Yes, I consent to take part", "lm_familiarity": "Somewhat familiar"}
    if full:
        row.update({
            "self_description": "Soy maestra jubilada en Valencia; me gustan las respuestas breves y directas.",
            "system_string": "Answer briefly. Never use bullet points. Be honest when you do not know.",
            "age": "55-64 years old", "gender": "Female", "education": "University Bachelors Degree",
            "employment_status": "Retired", "marital_status": "Married", "english_proficiency": "Fluent",
            "religion": {"self_described": "catholic", "categorised": "Christian", "simplified": "Christian"},
            "ethnicity": {"self_described": "white", "categorised": "White", "simplified": "White"},
            "location": {"birth_country": "Spain", "birth_countryISO": "ESP", "birth_subregion": "Southern Europe",
                         "reside_country": "Spain", "reside_countryISO": "ESP",
                         "reside_subregion": "Southern Europe", "same_birth_reside_country": "Yes",
                         "special_region": "Europe"},
            "stated_prefs": {"values": 80, "creativity": 20, "fluency": 70, "factuality": 95, "diversity": 30,
                             "safety": 60, "personalisation": 40, "helpfulness": 90, "other": None,
                             "other_text": None},
        })
    else:
        row.update({"self_description": None, "system_string": "Be kind.", "age": "Prefer not to say",
                    "gender": None, "religion": None, "location": None})
    row.update(extra)
    return row


def model_turn(turn: int, content: str, score: int, chosen: bool, within: Any, model: str = "gpt-4") -> dict[str, Any]:
    """A rated model response of ``conversation_history``."""
    return {"turn": turn, "role": "model", "content": content, "model_provider": "openai", "model_name": model,
            "score": score, "if_chosen": chosen, "within_turn_id": within}


def conversation(conv_id: str, user_id: str, turns: list[tuple[str, list[tuple[str, int, bool]]]],
                 feedback: str | None = "It answered my question without lecturing me.") -> dict[str, Any]:
    """A conversation row: each turn is (the person's message, [(response, score, if_chosen), ...])."""
    history: list[dict[str, Any]] = []
    for t, (message, responses) in enumerate(turns):
        history.append({"turn": t, "role": "user", "content": message})
        for j, (text, score, chosen) in enumerate(responses):
            history.append(model_turn(t, text, score, chosen, j))
    row: dict[str, Any] = {
        "conversation_id": conv_id, "user_id": user_id, "conversation_type": "values guided",
        "opening_prompt": turns[0][0], "conversation_turns": len(turns), "conversation_history": history,
        "performance_attributes": {"values": 80, "fluency": 90}, "choice_attributes": {"values": 70},
        "generated_datetime": "2023-11-30 12:00:00", "timing_duration_s": 321.5, "timing_duration_mins": 5.36,
        "included_in_balanced_subset": True,
    }
    if feedback is not None:
        row["open_feedback"] = feedback
    return row


def prism_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Survey and conversation rows: u1 (two conversations, multi-turn, Spanish text), u2 (optional
    answers missing, one conversation with a single pair and no feedback), u3 (survey only)."""
    survey = [survey_row("user0001"), survey_row("user0002", full=False), survey_row("user0003", survey_only=True)]
    conversations = [
        conversation("c0001", "user0001", [
            ("¿Es moral comer carne?", [("Depende de tus valores; aquí tienes argumentos de ambos lados.", 91, True),
                                        ("Sí.", 12, False), ("No, nunca.", 40, False),
                                        ("As an AI I cannot answer that.", 5, False)]),
            ("¿Y el pescado?", [("El pescado plantea preguntas parecidas.", 70, True),
                                ("El pescado es distinto porque...", 64, False)]),
        ]),
        conversation("c0002", "user0001", [
            ("Give me a short poem about rain", [("Rain taps the glass, the day turns slow.", 88, True),
                                                 ("Rain is water falling from clouds.", 30, False)]),
        ], feedback="Me gustó el poema corto."),
        conversation("c0003", "user0002", [
            ("How do I boil an egg?", [("Eggs are laid by hens.", 20, False), ("Boil it for 9 minutes.", 77, True)]),
        ], feedback=None),
    ]
    return survey, conversations


#: langid's flag of each message of :func:`prism_rows`' conversations, turn by turn.
LANGUAGES = {"c0001": ["es", "es"], "c0002": ["en"], "c0003": ["en"]}


def metadata_rows(survey: list[dict[str, Any]], conversations: list[dict[str, Any]],
                  languages: dict[str, list[str | None]]) -> list[dict[str, Any]]:
    """``metadata.jsonl``: one row per text, in the order the authors' ``get_text_instances.py``
    writes them (survey texts, feedback, then each message and response), with the code book's
    fields; a person's message in conversation ``c``, turn ``t`` is flagged ``languages[c][t]``
    (None: no flag, as for a missing text), every other text ``en``."""

    def row(column: str, user: str, conv: Any = None, interaction: Any = None, utterance: Any = None,
            language: str | None = "en") -> dict[str, Any]:
        return {"column_id": column, "user_id": user, "conversation_id": conv, "interaction_id": interaction,
                "utterance_id": utterance, "pii_flag": False, "pii_manual_flag": None, "language_flag": language,
                "en_flag": language == "en",
                "moderation_flag": {"flagged": False, "categories": {"hate": False}, "category_scores": {"hate": 0.0}}}

    out = [row(column, s["user_id"]) for column in ("system_string", "self_description") for s in survey]
    out += [row("open_feedback", c["user_id"], c["conversation_id"]) for c in conversations]
    interaction = utterance = 0
    for c in conversations:
        for entry in c["conversation_history"]:
            if entry["role"] == "user":
                interaction += 1
                flags = languages.get(c["conversation_id"], [])
                flag = flags[entry["turn"]] if entry["turn"] < len(flags) else "en"
                out.append(row("user_prompt", c["user_id"], c["conversation_id"], f"int{interaction}", None, flag))
            else:
                out.append(row("model_response", c["user_id"], c["conversation_id"], f"int{interaction}",
                               f"ut{utterance}"))
                utterance += 1
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as JSON Lines (non-ASCII kept as UTF-8, as the release writes it)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_prism(root: Path, survey: list[dict[str, Any]] | None = None,
                conversations: list[dict[str, Any]] | None = None,
                languages: dict[str, list[str | None]] | None = None) -> Path:
    """Write a PRISM copy under ``root`` (default rows: :func:`prism_rows`; the messages' language
    flags: ``languages``, default :data:`LANGUAGES`, others ``en``); returns ``root``."""
    default_survey, default_conversations = prism_rows()
    survey = default_survey if survey is None else survey
    conversations = default_conversations if conversations is None else conversations
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "survey.jsonl", survey)
    write_jsonl(root / "conversations.jsonl", conversations)
    write_jsonl(root / "utterances.jsonl", [])
    write_jsonl(root / "metadata.jsonl", metadata_rows(survey, conversations, LANGUAGES if languages is None
                                                       else languages))
    return root


def many_rows(n_people: int = 6, n_conversations: int = 6) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A larger copy for the few-shot protocol: each person has ``n_conversations`` one-turn
    conversations of three rated responses; odd-numbered people always choose the shortest answer,
    even-numbered ones the longest (a preference a method can learn from their history)."""
    survey = [survey_row(f"user{i:04d}", full=i % 2 == 0) for i in range(n_people)]
    conversations = []
    for i in range(n_people):
        for c in range(n_conversations):
            answers = [f"Short {c}.", f"A middling answer {c} with some words.",
                       f"A long answer number {c} that goes on and on with many details and examples."]
            chosen = 0 if i % 2 else 2
            responses = [(text, 90 if j == chosen else 20 + 10 * j, j == chosen) for j, text in enumerate(answers)]
            conversations.append(conversation(f"c{i:02d}{c:02d}", f"user{i:04d}",
                                              [(f"Question {c} from person {i}", responses)]))
    return survey, conversations

"""PRISM read from a local copy in its exact hub layout: pairs, rating gaps, people, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.prism.constants import HF_REPO
from prb_tasks.data.prism.reader import read_prism
from tests.prism_fixture import conversation, prism_rows, survey_row, write_jsonl, write_prism


def test_pairs_are_chosen_against_each_rated_alternative_with_the_gap(tmp_path: Path) -> None:
    copy = read_prism(write_prism(tmp_path))
    assert (copy.surveyed, copy.conversations) == (3, 3)
    people = {p.person_id: p for p in copy.people}
    assert sorted(people) == ["user0001", "user0002"]  # user0003 only took the survey
    first = people["user0001"].choices
    # Turn 0: the chosen response (91) against the three others; turn 1 (70 vs 64); the poem (88 vs 30).
    assert [(c.interaction, c.gap) for c in first] == [
        ("c0001/0", 79.0), ("c0001/0", 51.0), ("c0001/0", 86.0), ("c0001/1", 6.0), ("c0002/0", 58.0)]
    assert {c.chosen for c in first[:3]} == {"Depende de tus valores; aquí tienes argumentos de ambos lados."}
    assert [c.rejected for c in first[:3]] == ["Sí.", "No, nunca.", "As an AI I cannot answer that."]
    # A later turn is asked as the person saw it: after the earlier exchange with the chosen answer.
    assert first[3].prompt.startswith("Conversation so far:\nPerson: ¿Es moral comer carne?\nAssistant: Depende")
    assert first[3].prompt.endswith("¿Y el pescado?")
    assert [c.gap_bucket for c in first] == ["gap 30+", "gap 30+", "gap 30+", "gap 1-9", "gap 30+"]
    # open_feedback is about the whole conversation; the reason of a choice is the opening turn's choice_attributes.
    assert first[4].feedback == "Me gustó el poema corto."
    assert first[4].reason == "How much each quality mattered in this choice, 1-100: values 70"
    assert first[3].reason == "" and first[3].feedback == first[0].feedback
    assert all(c.chosen_first for c in first)


def test_profile_and_missing_optional_fields(tmp_path: Path) -> None:
    people = {p.person_id: p for p in read_prism(write_prism(tmp_path)).people}
    full, sparse = people["user0001"], people["user0002"]
    assert full.profile[0] == ("Self-description",
                               "Soy maestra jubilada en Valencia; me gustan las respuestas breves y directas.")
    assert full.demographics["religion"] == "Christian" and full.demographics["country of residence"] == "Spain"
    assert full.country == "Spain"
    # Null and missing answers are left out, never printed as "None".
    assert sparse.demographics == {"age": "Prefer not to say"}
    assert sparse.profile == (("System prompt written for AI assistants", "Be kind."),)
    assert sparse.country == ""
    (only,) = sparse.choices  # one choice: judged with no history
    assert (only.feedback, only.gap, only.chosen_first, only.key) == ("", 57.0, False, "user0002/c0003/0/0")


def test_a_turn_without_one_chosen_response_gives_no_pair_and_ends_the_conversation(tmp_path: Path) -> None:
    survey, _ = prism_rows()
    rows = [conversation("c9", "user0001", [
        ("hola", [("a", 50, True), ("b", 50, True)]),  # two marked chosen: which one went on is unknown
        ("y luego", [("c", 80, True), ("d", 10, False)]),
    ]), conversation("c10", "user0002", [("x", [("same", 50, True), ("same ", 40, False)])])]
    copy_error = pytest.raises(DataError, match="no conversation has a turn")
    with copy_error:
        read_prism(write_prism(tmp_path, survey, rows))
    rows.append(conversation("c11", "user0002", [("y", [("good", 90, True), ("bad", 10, False)])]))
    # A later turn's A and B responses with one text are both marked chosen (the data matches the
    # continued answer by its text): one answer, no pair, and the conversation goes on from it.
    rows.append(conversation("c12", "user0002", [("z", [("fine", 80, True), ("poor", 30, False)]),
                                                 ("and?", [("same", 60, True), ("same", 60, True)]),
                                                 ("last", [("yes", 70, True), ("no", 20, False)])]))
    copy = read_prism(write_prism(tmp_path, survey, rows))
    assert [c.key for p in copy.people for c in p.choices] == ["user0002/c11/0/1", "user0002/c12/0/1",
                                                                "user0002/c12/2/1"]
    assert copy.skipped == {"without exactly one chosen response": 1, "whose responses are all one text": 2}
    assert "Assistant: same" in next(c for p in copy.people for c in p.choices if c.key.endswith("c12/2/1")).prompt


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda s, c: c[0]["conversation_history"][1].update(score="91"),
     "conversations.jsonl, line 1 (conversation 'c0001'): field 'conversation_history.1.score"),
    (lambda s, c: c[1]["conversation_history"][1].pop("if_chosen"),
     "conversations.jsonl, line 2 (conversation 'c0002'): field 'conversation_history.1': Value error, "
     "a model response needs its score and if_chosen"),
    (lambda s, c: c[2].update(user_id="nobody"),
     "conversations.jsonl, line 3 (conversation 'c0003'): field 'user_id': 'nobody' has no row in survey.jsonl"),
    (lambda s, c: c[0]["conversation_history"][0].update(role="human"),
     "field 'conversation_history.0.role': Input should be 'user' or 'model'"),
    (lambda s, c: s[1].update(self_description=7), "survey.jsonl, line 2: field 'self_description'"),
    (lambda s, c: s.append(survey_row("user0001")), "survey.jsonl, line 4: field 'user_id': 'user0001' appears twice"),
])
def test_bad_rows_are_one_line_naming_file_row_and_field(tmp_path: Path, mutate, expected: str) -> None:
    survey, conversations = prism_rows()
    mutate(survey, conversations)
    with pytest.raises(DataError) as caught:
        read_prism(write_prism(tmp_path, survey, conversations))
    message = str(caught.value)
    assert expected in message and "\n" not in message and message.startswith("prb: bad row in ")


def test_missing_file_and_broken_json_are_one_line(tmp_path: Path) -> None:
    folder = write_prism(tmp_path / "copy")
    (folder / "survey.jsonl").unlink()
    with pytest.raises(DataError, match=r"has no survey.jsonl; .*prb data download DIR --family prism"):
        read_prism(folder)
    write_prism(folder)
    with (folder / "conversations.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"conversation_id": "c4", \n')
    with pytest.raises(DataError, match=r"conversations.jsonl.* line 4"):
        read_prism(folder)


def test_prb_data_validate_and_the_layout_guess(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.cli.datatools import validate
    from prb_tasks.data.family import detect_family

    folder = write_prism(tmp_path / "prism")
    assert detect_family(folder) == "prism"
    assert validate(folder) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{folder}: ok"
    assert "  people with pairs: 2 (1 with a single pair, judged with no history); pairs: 6, median 5 per person" in out
    assert "  by rating gap: gap 1-9 1, gap 30+ 5" in out
    assert "  by language: es 4, en 2" in out
    assert all(len(line) <= 120 for line in out)
    write_jsonl(folder / "conversations.jsonl", [{"conversation_id": "c1", "user_id": "user0001"}])
    assert validate(folder, "prism") == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert "conversations.jsonl, line 1 (conversation 'c1'): field 'conversation_history': Field required" in line


def test_prb_data_download_fetches_the_four_files_then_validates(tmp_path: Path, monkeypatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.cli import datatools

    asked: list[tuple[str, list[str]]] = []

    def snapshot(repo: str, patterns: list[str], target: Path, *_again: str) -> int:
        asked.append((repo, patterns))
        write_prism(target)  # what the hub holds, in its layout
        return 0

    monkeypatch.setattr(datatools, "_snapshot", snapshot)
    assert datatools.download(tmp_path / "dl", family="prism") == 0
    assert asked == [(HF_REPO, ["survey.jsonl", "conversations.jsonl", "utterances.jsonl", "metadata.jsonl",
                                "README.md"])]
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'dl'}: ok")
    assert datatools.download(tmp_path / "dl", ["x"], family="prism") == 2


def test_rows_keep_their_json_types(tmp_path: Path) -> None:
    # The release writes scores as integers and if_chosen as booleans; a copy re-saved by a tool that
    # turned them into floats still reads (1-100 as 91.0), a boolean written as text does not.
    survey, conversations = prism_rows()
    conversations[2]["conversation_history"][2]["score"] = 77.0
    copy = read_prism(write_prism(tmp_path, survey, conversations))
    assert [c.gap for p in copy.people if p.person_id == "user0002" for c in p.choices] == [57.0]
    conversations[2]["conversation_history"][2]["if_chosen"] = "True"
    with pytest.raises(DataError, match=r"field 'conversation_history.2.if_chosen': Input should be a valid boolean"):
        read_prism(write_prism(tmp_path, survey, conversations))


def test_a_pairs_language_is_its_conversations_from_the_metadata(tmp_path: Path) -> None:
    people = {p.person_id: p for p in read_prism(write_prism(tmp_path / "a")).people}
    assert [(c.key, c.language) for c in people["user0001"].choices] == [
        ("user0001/c0001/0/1", "es"), ("user0001/c0001/0/2", "es"), ("user0001/c0001/0/3", "es"),
        ("user0001/c0001/1/1", "es"), ("user0001/c0002/0/1", "en")]
    assert [c.language for c in people["user0002"].choices] == ["en"]
    # Most of the person's messages decide; a tie goes to the language flagged first; a message
    # without a flag and every text that is not the person's message (answers, feedback) count for nothing.
    survey, conversations = prism_rows()
    flags = {"c0001": ["de", None], "c0002": ["fr"], "c0003": [None]}
    people = {p.person_id: p for p in read_prism(write_prism(tmp_path / "b", survey, conversations, flags)).people}
    assert {c.key.split("/")[1]: c.language for p in people.values() for c in p.choices} == {
        "c0001": "de", "c0002": "fr", "c0003": ""}
    conversations[0]["conversation_history"].extend([
        {"turn": 2, "role": "user", "content": "Und Fisch?"},
        {"turn": 2, "role": "model", "content": "Ja.", "score": 60, "if_chosen": True, "within_turn_id": 0},
        {"turn": 2, "role": "model", "content": "Nein.", "score": 10, "if_chosen": False, "within_turn_id": 1}])
    flags = {"c0001": ["it", "es", "es"]}
    (first, *_) = read_prism(write_prism(tmp_path / "c", survey, conversations, flags)).people
    assert {c.language for c in first.choices if c.group == "c0001"} == {"es"}
    flags = {"c0001": ["it", "es", None]}
    (first, *_) = read_prism(write_prism(tmp_path / "d", survey, conversations, flags)).people
    assert {c.language for c in first.choices if c.group == "c0001"} == {"it"}


def test_the_metadata_file_is_optional_and_a_bad_row_is_one_line(tmp_path: Path) -> None:
    folder = write_prism(tmp_path / "copy")
    (folder / "metadata.jsonl").unlink()
    assert {c.language for p in read_prism(folder).people for c in p.choices} == {""}
    write_jsonl(folder / "metadata.jsonl", [{"column_id": "user_prompt", "conversation_id": "c0001",
                                             "language_flag": "es"},
                                            {"column_id": "user_prompt", "conversation_id": 7, "language_flag": "en"}])
    with pytest.raises(DataError) as caught:
        read_prism(folder)
    message = str(caught.value)
    assert "metadata.jsonl, line 2: field 'conversation_id'" in message and "\n" not in message


@pytest.mark.parametrize("column", ["user_prompt\\ud800", "\\udfff"])
def test_a_metadata_row_the_model_refuses_is_refused_however_plain_it_looks(tmp_path: Path, column: str) -> None:
    # A JSON escape of half a surrogate pair is a str to Python, which MetadataRow's column_id (at least one
    # character) cannot read: the row is refused in one line, never read past (since the JSON Lines reader
    # refuses any text holding one, before the model sees the row).
    folder = write_prism(tmp_path / "copy")
    (folder / "metadata.jsonl").write_text('{"column_id": "user_prompt", "conversation_id": "c0001", '
                                           '"language_flag": "es"}\n'
                                           f'{{"column_id": "{column}", "conversation_id": "c0002", '
                                           '"language_flag": "en"}\n', encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_prism(folder)
    message = str(caught.value)
    assert "metadata.jsonl line 2: a text holds \\ud" in message and "surrogate" in message and "\n" not in message


def test_a_lone_surrogate_in_a_conversation_is_one_line_and_a_pair_is_a_character(tmp_path: Path) -> None:
    # A lone surrogate escape decoded to half a character, which crashed hashing the pair's prompt (a
    # UnicodeEncodeError traceback from prb eval, prb data validate and prb audit); a pair is an escaped emoji.
    survey, conversations = prism_rows()
    conversations[0]["conversation_history"][0]["content"] = "hola \U0001f600"
    folder = tmp_path / "copy"
    write_prism(folder, survey, conversations)
    text = (folder / "conversations.jsonl").read_text(encoding="utf-8")
    escaped = text.replace("\U0001f600", "\\ud83d\\ude00", 1)
    (folder / "conversations.jsonl").write_text(escaped, encoding="utf-8")
    assert "\\ud83d\\ude00" in escaped and read_prism(folder)
    (folder / "conversations.jsonl").write_text(escaped.replace("\\ude00", "", 1), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_prism(folder)
    assert str(caught.value).startswith(f"prb: {folder / 'conversations.jsonl'} line 1: a text holds \\ud83d, half")

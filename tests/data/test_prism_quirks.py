"""PRISM's quirks as the release has them (the order of answers, the empty-answer placeholder, feedback
about the whole conversation) and files a user might be handed broken: each read right or refused in one line."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.prism.reader import PLACEHOLDER, read_prism
from tests.prism_fixture import conversation, prism_rows, write_jsonl, write_prism


def _one_turn(answers: list[tuple[str, int, bool]], conv: str = "c9", user: str = "user0001") -> dict:
    return conversation(conv, user, [("Which is better?", answers)])


def test_position_compares_the_pairs_two_places_not_the_turns_first(tmp_path: Path) -> None:
    # The chosen answer is the third of four: it came after two of its rivals and before one.
    survey, _ = prism_rows()
    rows = [_one_turn([("w", 30, False), ("x", 20, False), ("chosen", 90, True), ("z", 10, False)])]
    (person,) = read_prism(write_prism(tmp_path, survey, rows)).people
    assert [(c.rejected, c.chosen_first) for c in person.choices] == [("w", False), ("x", False), ("z", True)]


def test_the_empty_string_placeholder_is_no_answer_and_is_counted(tmp_path: Path) -> None:
    survey, _ = prism_rows()
    rows = [_one_turn([("A real answer.", 80, True), ("EMPTY STRING", 10, False), ("Another.", 40, False)]),
            _one_turn([("EMPTY STRING", 60, True), ("Short.", 50, False)], conv="c10")]
    copy = read_prism(write_prism(tmp_path, survey, rows))
    assert [(c.chosen, c.rejected) for p in copy.people for c in p.choices] == [("A real answer.", "Another.")]
    assert copy.skipped[PLACEHOLDER] == 2
    from prb_tasks.data.people import summary_lines

    assert any("EMPTY STRING" in line and line.startswith("left out: 2 pairs") for line in summary_lines(
        copy.people, copy.skipped))


@pytest.mark.parametrize("score", [math.nan, math.inf, 1000, -50, 55.5, 0])
def test_a_score_off_the_1_to_100_scale_is_one_line_naming_file_line_and_field(tmp_path: Path, score: float) -> None:
    survey, conversations = prism_rows()
    conversations[1]["conversation_history"][2]["score"] = score
    folder = write_prism(tmp_path, survey, conversations)
    with pytest.raises(DataError) as caught:
        read_prism(folder)
    message = str(caught.value)
    assert "\n" not in message
    assert ("conversations.jsonl, line 2 (conversation 'c0002'): field 'conversation_history.2.score'" in message
            and "1 to 100" in message), message


def test_a_nan_score_fails_validate_in_one_line_not_a_traceback(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.cli.datatools import validate

    survey, conversations = prism_rows()
    conversations[0]["conversation_history"][1]["score"] = math.nan
    folder = write_prism(tmp_path, survey, conversations)
    assert validate(folder, "prism") == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert "field 'conversation_history.1.score'" in line and ": ok" not in line


def test_a_repeated_conversation_is_refused(tmp_path: Path) -> None:
    survey, conversations = prism_rows()
    conversations.append(conversations[0])
    with pytest.raises(DataError) as caught:
        read_prism(write_prism(tmp_path, survey, conversations))
    message = str(caught.value)
    assert "id 'c0001' appears 2 times" in message and "lines 1, 4" in message and "\n" not in message


def test_a_file_without_line_breaks_is_refused_before_it_is_read_whole(tmp_path: Path, monkeypatch) -> None:
    from prb_tasks.data import people

    folder = write_prism(tmp_path)
    monkeypatch.setattr(people, "MAX_ROW_BYTES", 4096)  # the bound, scaled down with the file
    with (folder / "conversations.jsonl").open("w", encoding="utf-8") as handle:
        handle.write('{"conversation_id": "' + "x" * 1_000_000)
    read: list[int] = []
    real_open = Path.open

    def spying_open(self: Path, *args, **kwargs):  # what the reader asks of the file, call by call
        handle = real_open(self, *args, **kwargs)
        if self.name == "conversations.jsonl":
            real_readline = handle.readline

            def readline(size: int = -1) -> bytes:
                line = real_readline(size)
                read.append(len(line))
                return line

            handle.readline = readline
        return handle

    monkeypatch.setattr(Path, "open", spying_open)
    with pytest.raises(DataError, match=r"conversations.jsonl line 1 is longer than .*no line break"):
        read_prism(folder)
    assert read and max(read) <= 4097


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX thing")
def test_a_named_pipe_in_a_files_place_is_named_as_such(tmp_path: Path) -> None:
    folder = write_prism(tmp_path)
    (folder / "conversations.jsonl").unlink()
    os.mkfifo(folder / "conversations.jsonl")
    with pytest.raises(DataError, match=r"conversations.jsonl is a named pipe \(FIFO\)"):
        read_prism(folder)
    from prb_tasks.data.family import detect_family

    assert detect_family(folder) == "prism"


def test_open_feedback_is_shown_as_about_the_whole_conversation(tmp_path: Path) -> None:
    from prb_tasks.documents.prism import build_docs

    survey, conversations = prism_rows()
    folder = write_prism(tmp_path, survey, conversations)
    docs = build_docs("profile", data_dir=str(folder), k=4)
    # user0001's c0001 items show the c0002 poem choice as history, with that conversation's feedback.
    text = next(d for d in docs if d["pair_key"] == "user0001/c0001/1/1")["prompt"]
    assert "In their words" not in text and "this very choice" not in text
    assert "About the whole conversation this comparison came from, they said: Me gustó el poema corto." in text
    oracle = build_docs("oracle", data_dir=str(folder), k=4)
    first = next(d for d in oracle if d["pair_key"] == "user0001/c0001/0/1")["prompt"]
    later = next(d for d in oracle if d["pair_key"] == "user0001/c0001/1/1")["prompt"]
    assert "this very choice" in first and "values 70" in first  # the opening turn's choice attributes
    assert "this very choice" not in later  # asked after the opening turn only
    assert "about the whole conversation" in later and "It answered my question without lecturing me." in later


def test_json_lines_bound_leaves_ordinary_files_alone(tmp_path: Path) -> None:
    from prb_tasks.common.textfiles import json_lines

    path = write_jsonl(tmp_path / "x.jsonl", [{"a": "é" * 100}, {"b": 2}])
    assert [v for _, v in json_lines(path, "data file", "fix it", DataError, max_line=1024)] == [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

"""Community Alignment's quirks as the release has them (a placeholder for an empty answer, the generator's
end-of-text token, a file saved by Excel) and broken files a user might be handed: read right, or refused in
one line naming the file and the row."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prb_tasks.data.community_alignment.reader import PLACEHOLDER, read_community
from prb_tasks.data.errors import DataError
from tests.community_alignment_fixture import ca_row, ca_rows, write_ca_latest


def _file(tmp_path: Path, rows: list | None = None) -> Path:
    return write_ca_latest(tmp_path, rows) / "community_alignment.csv"


def test_the_end_of_text_token_is_no_part_of_an_answer(tmp_path: Path) -> None:
    rows = [ca_row(1, 7, "en", [("Hi?", {"a": "Hello!<|end_of_text|>", "b": "Hey.<|end_of_text|>"}, "a", "")])]
    (person,) = read_community(_file(tmp_path, rows)).people
    assert [(c.chosen, c.rejected) for c in person.choices] == [("Hello!", "Hey.")]


def test_the_placeholder_of_an_empty_answer_is_counted(tmp_path: Path) -> None:
    rows = [ca_row(1, 7, "it", [("Ciao?", {"a": "Ciao!", "b": "EMPTY STRING", "c": "Salve.", "d": ""}, "a", "")])]
    copy = read_community(_file(tmp_path, rows))
    assert copy.skipped[PLACEHOLDER] == 1
    from prb_tasks.data.people import summary_lines

    assert f"left out: 1 {PLACEHOLDER}" in summary_lines(copy.people, copy.skipped)


def test_a_repeated_row_or_a_reused_conversation_id_is_refused(tmp_path: Path) -> None:
    rows = ca_rows()
    with pytest.raises(DataError) as caught:
        read_community(_file(tmp_path / "a", [*rows, rows[2]]))
    message = str(caught.value)
    assert "row 7: field 'conversation_id': '3' is also row 3's" in message and "\n" not in message
    other = ca_row(3, 999, "en", [("Another?", {"a": "One.", "b": "Two."}, "a", "")])
    with pytest.raises(DataError, match=r"row 7: field 'conversation_id': '3' is also row 3's"):
        read_community(_file(tmp_path / "b", [*rows, other]))


def test_a_file_cut_mid_row_or_mid_cell_is_refused(tmp_path: Path) -> None:
    path = _file(tmp_path)
    text = path.read_text(encoding="utf-8")
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    # Mid-row: the last row ends after its third cell.
    path.write_text(text[:len(text) - len(last) - 1] + ",".join(last.split(",")[:3]) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_community(path)
    assert "row 6: 3 cells where the header has" in str(caught.value) and "cut short" in str(caught.value)
    # Mid-cell: the file ends inside a quoted cell (a response with a comma, so quoted).
    rows = [*ca_rows()[:2], ca_row(9, 9, "en", [("Q?", {"a": "Yes, certainly, and more", "b": "No."}, "a", "")])]
    path = _file(tmp_path / "cell", rows)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:text.index("Yes, certainly") + 8], encoding="utf-8")
    with pytest.raises(DataError, match=r"not a readable CSV file .*cut short or broken"):
        read_community(path)


def test_a_file_without_line_breaks_is_refused_before_it_is_read_whole(tmp_path: Path, monkeypatch) -> None:
    from prb_tasks.data.community_alignment import reader

    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 4096)
    path = _file(tmp_path)
    path.write_text("conversation_id," + "x" * 100_000, encoding="utf-8")
    with pytest.raises(DataError, match=r"community_alignment.csv line 1 is longer than .*no line break"):
        read_community(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX thing")
def test_a_named_pipe_in_the_files_place_is_named_as_such(tmp_path: Path) -> None:
    path = _file(tmp_path)
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(DataError, match=r"community_alignment.csv is a named pipe \(FIFO\)"):
        read_community(tmp_path)


def test_a_csv_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = _file(tmp_path)
    plain = read_community(path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # Excel's "CSV UTF-8"
    assert read_community(path).people == plain.people

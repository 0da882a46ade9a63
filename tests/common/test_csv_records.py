"""csv_records reads every record as csv.reader(strict=True) does, refusals included."""

from __future__ import annotations

import csv
import io
import random

import pytest

from prb_tasks.common import csv_records
from prb_tasks.common.csv_records import records


def _lines(text: str) -> list[str]:
    # As a file read a line at a time gives them: split after each "\n" only (a lone "\r" stays inside).
    return io.StringIO(text, newline="").readlines()


def _read(reader, lines: list[str]) -> list:
    got: list = []
    try:
        got.extend(reader(iter(lines)))
    except csv.Error as exc:
        got.append(("refused", str(exc)))
    return got


def _csv(lines):
    return csv.reader(lines, strict=True)


@pytest.fixture
def small_limit():
    old = csv.field_size_limit(40)
    yield
    csv.field_size_limit(old)


def test_random_texts_read_as_csv_reads_them(small_limit):
    # Short texts of the characters csv treats apart, thrown together: mostly broken files.
    rng = random.Random(5)
    pieces = ["a", "b", ",", '"', "\n", "\r\n", "\r", " ", '""', "\0", "xyz"]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert _read(records, _lines(text)) == _read(_csv, _lines(text)), repr(text)


def test_written_files_with_one_character_changed_read_as_csv_reads_them():
    rng = random.Random(7)
    pieces = ["a", "b c", ",", '"', "\n", "\r\n", "\r", '""', "é", ""]
    for _ in range(5000):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator=rng.choice(["\r\n", "\n"]))
        for _ in range(rng.randint(0, 4)):
            writer.writerow(["".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))
                             for _ in range(rng.randint(0, 4))])
        text = out.getvalue()
        if text and rng.random() < 0.3:
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice(['"', ",", "\r", "x", "\n", ""]) + text[at + 1:]
        assert _read(records, _lines(text)) == _read(_csv, _lines(text)), repr(text)


def test_well_formed_records_are_read_without_csv(monkeypatch):
    # Multi-line quoted cells, doubled quotes, CRLF, empty cells and an empty line: all read by the quick path.
    text = 'id,text,n\r\n1,"one\nline ""two""\r\nthree",\r\n\r\n2,,"x,y"\n3,"",""""\n'
    expected = list(csv.reader(_lines(text), strict=True))
    monkeypatch.setattr(csv_records.csv, "reader", None)  # any hand-over to csv would fail
    assert list(records(_lines(text))) == expected
    assert expected[1] == ["1", 'one\nline "two"\r\nthree', ""] and expected[2] == []


def test_a_file_cut_inside_a_quoted_cell_is_refused_by_csv():
    assert _read(records, _lines('a,b\n1,"cut')) == [["a", "b"], ("refused", "unexpected end of data")]


def test_a_line_that_cannot_be_decoded_stops_reading_where_csv_stops():
    # The record before it is complete: both hand it out before taking the bad line.
    def lines():
        yield "a,b\n"
        yield '1,"two\n'
        yield 'lines"\n'
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")

    for reader in (records, _csv):
        got = []
        with pytest.raises(UnicodeDecodeError):
            for row in reader(lines()):
                got.append(row)
        assert got == [["a", "b"], ["1", "two\nlines"]]

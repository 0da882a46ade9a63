"""Community Alignment read from a local copy in its exact hub layouts (``community_alignment.csv``,
the first release's ``data/*.csv``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.data.community_alignment.constants import HF_REPO
from prb_tasks.data.community_alignment.reader import BAD_PREFERENCE, EMPTY_PREFERRED, data_file, read_community
from prb_tasks.data.errors import DataError
from tests.community_alignment_fixture import SHARED, ca_row, ca_rows, write_ca, write_ca_latest


def _people(tmp_path: Path, rows=None):
    return {p.person_id: p for p in read_community(data_file(write_ca(tmp_path, rows), "filtered")).people}


def test_the_preferred_response_against_each_other_response(tmp_path: Path) -> None:
    people = _people(tmp_path)
    assert list(people) == ["101", "102", "103", "104", "105"]
    first = people["101"].choices
    # The shared prompt: d preferred over a, b, c; then the two-turn conversation: a over b, b over a.
    assert [(c.key, c.rejected) for c in first[:3]] == [
        ("101/1/first/a", SHARED["a"]), ("101/1/first/b", SHARED["b"]), ("101/1/first/c", SHARED["c"])]
    assert {c.chosen for c in first[:3]} == {SHARED["d"]} and not any(c.chosen_first for c in first[:3])
    assert [(c.key, c.chosen, c.rejected, c.chosen_first) for c in first[3:]] == [
        ("101/4/first/b", "Un ratatouille.", "Un steak.", True),
        ("101/4/second/a", "Une glace.", "Une tarte aux pommes.", False)]
    assert first[4].prompt.startswith("Conversation so far:\nPerson: Propose un plat végétarien\nAssistant: Un "
                                      "ratatouille.") and first[4].prompt.endswith("Et un dessert ?")
    # Each turn's own feedback is its reason; an empty cell is no reason.
    assert [c.reason for c in first] == ["Chaque famille est différente."] * 3 + ["", "Plus léger."]
    assert {c.language for c in first} == {"fr"} and all(c.gap is None and c.gap_bucket == "no rating" for c in first)
    # Same prompt and answers, another annotator: the same item, whatever they chose.
    assert first[0].item == people["103"].choices[2].item != first[1].item


def test_attributes_and_people_with_little(tmp_path: Path) -> None:
    people = _people(tmp_path)
    assert people["101"].demographics == {
        "age": "35-45", "gender": "Female", "education level": "Post-secondary graduate",
        "political leaning": "Middle-of-the-road, centrist", "ethnicity": "White", "country": "France"}
    assert people["101"].country == "France" and people["101"].profile == ()
    hindi = people["104"]
    assert hindi.demographics == {} and hindi.country == "" and len(hindi.choices) == 1
    assert hindi.choices[0].chosen == "चाँद की रोशनी..." and hindi.choices[0].language == "hi"
    # The English conversation's second turn names no preference: its first turn still counts.
    assert [c.key for c in people["105"].choices] == ["105/6/first/b"]


@pytest.mark.parametrize(("change", "why", "expected"), [
    ({"first_turn_preferred_response": "response_e"}, BAD_PREFERENCE,
     "row 2 (conversation '2'), field 'first_turn_preferred_response': 'response_e' is not one of response_a .. "
     "response_d"),
    ({"first_turn_preferred_response": "B"}, BAD_PREFERENCE,
     "row 2 (conversation '2'), field 'first_turn_preferred_response': 'B' is not one of response_a .. response_d"),
    ({"first_turn_response_d": ""}, EMPTY_PREFERRED,
     "row 2 (conversation '2'), field 'first_turn_response_d': empty, but first_turn_preferred_response names it"),
])
def test_a_row_no_pair_can_be_read_from_is_skipped_counted_and_named(tmp_path: Path, change: dict, why: str,
                                                                     expected: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # A user cannot fix a published file: one such row must not refuse the other conversations.
    rows = ca_rows()
    rows[1].update(change)
    folder = write_ca(tmp_path, rows)
    copy = read_community(data_file(folder, "filtered"))
    assert "102" not in {p.person_id for p in copy.people} and len(copy.people) == 5 - 1
    assert copy.skipped[why] == 1 and copy.first_bad[why] == expected.replace("\n", "")
    from prb_tasks.cli.datatools import validate

    assert validate(folder, "community_alignment") == 0
    out = capsys.readouterr().out
    assert f"  turns that gave no pair: 1 {why}\n" in out
    assert f"the first: {expected}" in " ".join(out.split()) and max(map(len, out.splitlines())) <= 120


def test_an_empty_annotator_is_one_line_naming_file_row_and_field(tmp_path: Path) -> None:
    rows = ca_rows()
    rows[1].update({"annotator_id": ""})
    with pytest.raises(DataError) as caught:
        read_community(data_file(write_ca(tmp_path, rows), "filtered"))
    message = str(caught.value)
    assert "row 2: field 'annotator_id': empty" in message and "filtered_community_alignment.csv" in message
    assert "\n" not in message


def test_the_later_single_file_and_which_file_each_split_reads(tmp_path: Path) -> None:
    # The later release: one community_alignment.csv at the top, with a wave column; auto reads it.
    folder = write_ca_latest(tmp_path / "latest")
    assert data_file(folder, "auto") == data_file(folder, "latest") == folder / "community_alignment.csv"
    assert [p.person_id for p in read_community(folder).people] == ["101", "102", "103", "104", "105"]
    # Beside the first release's files, auto takes the newest; filtered and full still name theirs.
    write_ca(folder, full=ca_rows()[:2])
    assert data_file(folder, "auto").name == "community_alignment.csv"
    assert data_file(folder, "full") == folder / "data" / "full_community_alignment.csv"
    assert data_file(write_ca(tmp_path / "first"), "auto").name == "filtered_community_alignment.csv"
    with pytest.raises(DataError, match="unknown Community Alignment split 'train'; expected one of auto, latest"):
        data_file(folder, "train")
    with pytest.raises(DataError, match=r"latest has no data/full_community_alignment.csv; it has "
                                        r"community_alignment.csv: give split latest \(or auto\)"):
        data_file(write_ca_latest(tmp_path / "only latest"), "full")


def test_the_placeholder_of_an_empty_response_is_no_response(tmp_path: Path) -> None:
    rows = [ca_row(1, 7, "it", [("Ciao?", {"a": "Ciao!", "b": "EMPTY STRING", "c": "Salve.", "d": ""}, "a", "")])]
    (person,) = read_community(write_ca_latest(tmp_path, rows)).people
    assert [c.rejected for c in person.choices] == ["Salve."]


def test_bad_files_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"has no data/full_community_alignment.csv; .*--family community_alignment"):
        data_file(tmp_path, "full")
    with pytest.raises(DataError, match=r"has no community_alignment.csv or data/filtered_community_alignment.csv "
                                        r"or data/full_community_alignment.csv; "):
        data_file(tmp_path, "auto")
    folder = write_ca(tmp_path / "copy")
    path = folder / "data" / "filtered_community_alignment.csv"
    path.write_text("conversation_id,annotator_id\n1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="no column assigned_lang, first_turn_prompt"):
        read_community(path)
    path.write_bytes(b"conversation_id\n\xff\xfe\n")
    with pytest.raises(DataError, match="not UTF-8"):
        read_community(path)
    write_ca(folder, [ca_row(9, 9, "en", [("q", {"a": "x", "b": "x "}, "a", "")])])
    with pytest.raises(DataError, match="no conversation has a turn with a preferred and another response"):
        read_community(path)


def test_prb_data_validate_and_download(tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.cli import datatools
    from prb_tasks.data.family import detect_family

    folder = write_ca(tmp_path / "ca", full=ca_rows()[:2])
    assert detect_family(folder) == "community_alignment"
    assert datatools.validate(folder) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{folder / 'data' / 'filtered_community_alignment.csv'}: ok"
    assert "  by language: fr 11, hi 1, en 1" in out
    assert "  turns that gave no pair: 1 without a preferred response" in out
    assert f"{folder / 'data' / 'full_community_alignment.csv'}: ok" in out and "  conversations: 2" in out
    assert not any("rating gap" in line for line in out) and all(len(line) <= 120 for line in out)
    latest = write_ca_latest(tmp_path / "latest")
    assert detect_family(latest) == "community_alignment" and datatools.validate(latest) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{latest / 'community_alignment.csv'}: ok"

    asked: list[tuple[str, list[str]]] = []

    def snapshot(repo: str, patterns: list[str], target: Path, *_again: str) -> int:
        asked.append((repo, patterns))
        write_ca(target)
        return 0

    monkeypatch.setattr(datatools, "_snapshot", snapshot)
    assert datatools.download(tmp_path / "dl", family="community_alignment") == 0
    assert asked == [(HF_REPO, ["community_alignment.csv", "data/filtered_community_alignment.csv",
                                "data/full_community_alignment.csv", "README.md"])]


def test_reading_leaves_the_process_wide_csv_limit_as_it_found_it(tmp_path: Path) -> None:
    # A raised limit left behind made prb validity accept a 200,000-character --scores cell it refuses
    # (tests/report/test_validity_benchmarks.py failed when a Community Alignment test ran first in its worker).
    import csv

    before = csv.field_size_limit()
    people = _people(tmp_path)
    assert people and csv.field_size_limit() == before

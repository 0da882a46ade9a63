"""Candidates brought by the user, grades read back, and the Best-of-N loaders' one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.data.bon_files import load_candidates, load_grades, text_sha
from prb_tasks.data.errors import DataError
from prb_tasks.documents.personalized_rb_bon import build_docs
from tests.conftest import sample_rows

ART = sample_rows("Art_and_Entertainment")


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def grade_sample(key: str, text: str, reply: str, aspects: int) -> dict:
    doc = {"pair_key": key, "variant": "bon_grade", "candidate_sha": text_sha(text), "aspects": aspects}
    return {"doc": doc, "resps": [[reply]], "filtered_resps": [reply]}


def test_user_candidates_by_key_and_id_become_grading_docs(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mine.jsonl", [
        {"pair_key": "art/0", "candidates": ["one", "two", "three"]},
        {"id": ART[1]["id"], "candidates": ["four", "five"]},
    ])
    docs = build_docs("bon_grade", data_dir="sample", candidates=str(path))
    assert [(d["pair_key"], d["candidate"]) for d in docs] == [
        ("art/0", 0), ("art/0", 1), ("art/0", 2), ("art/1", 0), ("art/1", 1)]
    assert docs[0]["aspects"] == len(ART[0]["rubric_aspects"])
    assert docs[3]["candidate_sha"] == text_sha("four")


def test_contestant_docs_carry_gold_and_skip_ungraded_questions(tmp_path: Path, capsys) -> None:
    cands = write_jsonl(tmp_path / "c.jsonl", [{"pair_key": "art/0", "candidates": ["x", "y"]},
                                               {"pair_key": "art/1", "candidates": ["z", "w"]}])
    n0 = len(ART[0]["rubric_aspects"])
    lines = "\n".join(["Aspect %d: 2" % i for i in range(1, n0 + 1)])
    grades = write_jsonl(tmp_path / "samples_personalized_rb_bon_grade_x.jsonl", [
        grade_sample("art/0", "x", lines, n0), grade_sample("art/0", "y", "no grade here", n0)])
    docs = build_docs("bon", data_dir="sample", candidates=str(cands), grades=str(grades))
    assert len(docs) == 1 and docs[0]["gold"] == [2.0, None] and docs[0]["choices"] == ["x", "y"]
    assert "art/1" not in {d["pair_key"] for d in docs}
    assert "1 questions have candidates without a gold grade" in capsys.readouterr().err
    judge_docs = build_docs("bon_judge", data_dir="sample", candidates=str(cands), grades=str(grades))
    assert [d["candidate"] for d in judge_docs] == [0, 1]
    assert "earlier posts reveal them" in judge_docs[0]["system_prompt"]


@pytest.mark.parametrize("records, message", [
    ([{"candidates": ["a"]}], "give exactly one of 'pair_key' or 'id'"),
    ([{"pair_key": "art/0", "candidates": []}], "non-empty list of strings"),
    ([{"pair_key": "art/0", "candidates": "a"}], "non-empty list of strings"),
    ([{"pair_key": "art/999", "candidates": ["a"]}], "no row 'art/999'"),
    ([{"id": "nope", "candidates": ["a"]}], "no row has id 'nope'"),
    ([{"pair_key": "art/0", "candidates": ["a"]}, {"pair_key": "art/0", "candidates": ["b"]}],
     "has candidates twice"),
])
def test_bad_candidate_files_are_one_line(tmp_path: Path, records: list, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(DataError, match=message) as err:
        build_docs("bon_grade", data_dir="sample", candidates=str(path))
    assert "\n" not in str(err.value)


def test_missing_paths_and_options(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="needs --metadata"):
        build_docs("bon_grade", data_dir="sample")
    with pytest.raises(DataError, match="does not exist"):
        load_candidates(str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="no personalized_rb_bon_grade samples"):
        load_grades(str(tmp_path))
    (tmp_path / "broken.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match="broken.jsonl line 1, column 2: not valid JSON"):
        load_candidates(str(tmp_path / "broken.jsonl"))


def test_failed_generations_leave_the_question_out(tmp_path: Path) -> None:
    from prb_tasks.replies.verdict import ERROR_MARK

    sample = {"doc": {"pair_key": "art/0", "variant": "bon_sample"}, "filtered_resps": [["ok", ERROR_MARK + " x"]]}
    good = {"doc": {"pair_key": "art/1", "variant": "bon_sample"}, "filtered_resps": [["a", "b"]]}
    write_jsonl(tmp_path / "samples_personalized_rb_bon_sample_2026.jsonl", [sample, good])
    found = load_candidates(str(tmp_path))
    assert found.failed == 1 and [s.key for s in found.sets] == ["art/1"]

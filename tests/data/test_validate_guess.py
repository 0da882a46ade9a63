"""`prb data validate DIR` guesses the family from the file names, and its lines fit 120 columns
(issue 63 item 4: a PRISM folder missing survey.jsonl was checked as Personalized RewardBench, in
three lines of 280-325 columns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.cli.datatools import validate


@pytest.mark.parametrize("present", ["conversations.jsonl", "utterances.jsonl"])
def test_a_prism_copy_missing_its_survey_is_checked_as_prism(tmp_path: Path, present: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / present).write_text("{}\n", encoding="utf-8")
    status = validate(tmp_path)
    out = capsys.readouterr()
    assert status != 0
    assert f"{tmp_path} has no survey.jsonl" in out.out + out.err, out
    assert "Art_and_Entertainment" not in out.out + out.err


def test_a_folder_of_nothing_known_says_so_within_120_columns(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert validate(tmp_path) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 120, out
    assert lines[1].split() == ["Art_and_Entertainment", "-", "missing"]
    flat = " ".join(line.strip() for line in lines)
    assert f"no folder '{tmp_path}/Art_and_Entertainment' for subset Art_and_Entertainment" in flat

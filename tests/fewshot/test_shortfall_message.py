"""The few-shot split's shortfall lines name a few users and count the rest, and fit 120 columns (issue 49.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.common.terminal import WIDTH
from prb_tasks.data.errors import DataError
from prb_tasks.documents.fewshot import build_docs
from prb_tasks.fewshot.split import make_split


def test_shortfall_line_names_three_users_and_counts_the_rest() -> None:
    pairs = {f"user{i:03d}": [f"p{i}-{n}" for n in range(2)] for i in range(40)}
    split = make_split(pairs, queries=8)
    lines = split.shortfall_lines()
    assert len(lines) == len(split.ks)
    named = sorted(u.user_id for u in split.unseen)
    assert lines[0] == (f"k=0: 20 of 20 unseen users have too few pairs (need 8 queries + 0 support) and are "
                        f"not evaluated: {', '.join(named[:3])} and 17 more")


def test_printed_shortfall_lines_fit_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefs = [{"user_id": f"person-with-a-long-name-{i:03d}", "preferences": [
        {"prompt": f"q{i}-{n}", "response_A": "a", "response_B": "b", "chosen_response": "response_A"}
        for n in range(2)]} for i in range(30)]
    path = tmp_path / "prefs.json"
    path.write_text(json.dumps(prefs), encoding="utf-8")
    with pytest.raises(DataError):  # nobody has 8 query pairs: nothing to evaluate
        build_docs("custom", "method", data_path=str(path))
    err = capsys.readouterr().err
    assert "and 12 more" in err
    assert max(len(line) for line in err.splitlines()) <= WIDTH, err

"""``prb train`` says how many unseen users have a demographic value no training user has
(issue 50: seed 0's split of 36 taste-group users leaves 8 occupation users whose occupation
no training user has, and a context model cannot have learned what it means)."""

from __future__ import annotations

import json
from pathlib import Path

from prb_tasks.testing.taste_groups import OCCUPATIONS, write_taste_users
from prb_tasks.train.coverage import coverage_line, unseen_only
from prb_tasks.train.sources import custom


def _split(path: Path, seed: int):
    return custom(str(path), {"queries": 4, "split_seed": seed})[1]


def test_unseen_users_with_an_occupation_no_training_user_has_are_counted(tmp_path):
    data = _split(write_taste_users(tmp_path / "taste.jsonl", users=36, pairs=8, queries=4), 0)
    seen = {data.users[u].demographics.get("occupation") for u in data.split.seen}
    expected = {u.user_id for u in data.split.unseen
                if data.users[u.user_id].demographics.get("occupation") not in seen | {None}}
    found = unseen_only(data)
    assert set(found) == expected and len(expected) == 8
    line = coverage_line(data)
    assert line == ("prb train: 8 of 18 unseen users have a demographic value no training user has "
                    "(occupation=archivist, occupation=diplomat, occupation=nurse and 1 more), so the model cannot "
                    "have learned it; more users per value or another --metadata split_seed puts some in training")


def test_a_split_that_trains_on_every_value_says_nothing(tmp_path):
    # Seed 6 puts one user of each occupation on each side (the closing test's split).
    data = _split(write_taste_users(tmp_path / "taste.jsonl", users=36, pairs=8, queries=4), 6)
    assert {o for pair in OCCUPATIONS for o in pair} == {data.users[u].demographics["occupation"]
                                                         for u in data.split.seen if data.users[u].demographics}
    assert unseen_only(data) == {} and coverage_line(data) is None


def _people(path: Path, new: str = "") -> Path:
    """Ten users of distinct ages from Japan who speak English; ``new`` lives in Peru and speaks Quechua too."""
    rows = [{"user_id": f"u{n}", "demographics": {"age": 20 + n, "home": {"country": "Peru" if f"u{n}" == new
                                                                          else "Japan"},
                                                  "langs": ["en", "qu"] if f"u{n}" == new else ["en"]},
             "preferences": [{"prompt": "p", "response_A": "a", "response_B": "b", "chosen_response": "response_A"}]
             * 6} for n in range(10)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_numbers_are_not_values_a_model_must_have_seen(tmp_path):
    """An unseen age lies between seen ones; an unseen country, nested or in a list, is new."""
    assert unseen_only(_split(_people(tmp_path / "f.jsonl"), 0)) == {}
    # The split depends on the ids only: the same user is unseen in the second file.
    new = _split(tmp_path / "f.jsonl", 0).split.unseen[0].user_id
    assert unseen_only(_split(_people(tmp_path / "f.jsonl", new), 0)) == {new: {"home.country=Peru", "langs=qu"}}

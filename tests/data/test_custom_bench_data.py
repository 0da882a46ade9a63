"""The benchmark's bring-your-own file generator writes valid users, the same rows in both formats."""

from __future__ import annotations

import sys
from pathlib import Path

from prb_tasks.data.custom.reader import read_users

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from custom_data import PER_USER, generate


def test_custom_generator_writes_valid_users_in_both_formats(tmp_path: Path) -> None:
    as_jsonl = read_users(generate(tmp_path / "l", seed=3, scale=0.02, fmt="jsonl"))
    as_json = read_users(generate(tmp_path / "j", seed=3, scale=0.02, fmt="json"))  # the real reader and schema
    assert as_jsonl == as_json
    # 0.02 of 767 / 989 / 1,074 rows: 15 / 20 / 21 preferences, five to a user.
    assert sum(len(u.preferences) for u in as_jsonl) == 56
    assert len(as_jsonl) == 3 + 4 + 5 and max(len(u.preferences) for u in as_jsonl) == PER_USER
    assert all(u.profile_texts for u in as_jsonl)
    assert {p.chosen_response for u in as_jsonl for p in u.preferences} == {"response_A", "response_B"}

"""The constructed taste-group users (prb_tasks/testing/taste_groups.py) hold what they claim:
each group shows through exactly one field, a content-blind scorer is at 50%, noise flips the
share asked for, and shuffling a field cuts its link to the group."""

from __future__ import annotations

import json

import numpy as np

from prb_tasks.testing.taste_groups import GROUPS, OCCUPATIONS, POSTS, user_field, write_taste_users


def _read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _style(text: str) -> int:
    return [g.capitalize() for g in GROUPS].index(text.split(":")[0])


def _chosen(pref) -> int:
    return _style(pref[pref["chosen_response"]])


def test_each_field_reveals_the_group_and_content_blind_is_half(tmp_path):
    users = _read(write_taste_users(tmp_path / "t.jsonl", users=36, pairs=16))
    assert {user_field(u) for u in range(36)} == {"demographics", "profile", "choices"}
    for u, record in enumerate(users):
        group, field = u % 3, user_field(u)
        assert ("demographics" in record) == (field == "demographics") and ("profile" in record) == (field == "profile")
        if field == "demographics":
            assert record["demographics"]["occupation"] in OCCUPATIONS[group]
        if field == "profile":
            assert record["profile"] == list(POSTS[group])
        assert all(_chosen(p) == group for p in record["preferences"])  # no noise: always the own style
    # A scorer that ranks the styles the same for everyone (brief > formal > detailed, say) wins half the pairs.
    rank = {0: 2, 2: 1, 1: 0}
    wins = [rank[_chosen(p)] > rank[_style(p["response_B" if p["chosen_response"] == "response_A" else "response_A"])]
            for r in users for p in r["preferences"]]
    assert 0.4 <= np.mean(wins) <= 0.6


def test_noise_and_shuffles(tmp_path):
    noisy = _read(write_taste_users(tmp_path / "n.jsonl", users=36, pairs=16, noise=0.1))
    flipped = np.mean([_chosen(p) != u % 3 for u, r in enumerate(noisy) for p in r["preferences"]])
    assert 0.05 <= flipped <= 0.15
    shown = _read(write_taste_users(tmp_path / "d.jsonl", users=90, shuffle="demographics"))
    agree = [r["demographics"]["occupation"] in OCCUPATIONS[u % 3] for u, r in enumerate(shown) if "demographics" in r]
    assert np.mean(agree) < 0.6  # about a third by chance, not all
    moved = _read(write_taste_users(tmp_path / "c.jsonl", users=90, pairs=16, queries=8, shuffle="choices"))
    for u, record in enumerate(moved):
        if user_field(u) == "choices":
            assert all(_chosen(p) == u % 3 for p in record["preferences"][8:])  # the queries keep the user's own
    pools = [len({_chosen(p) for p in r["preferences"][:8]} - {u % 3}) > 0 for u, r in enumerate(moved)
             if user_field(u) == "choices"]
    assert np.mean(pools) > 0.4  # the support pool follows another group for most of them

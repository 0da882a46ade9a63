"""The official single-order assignment reproduces the original script's draws."""

from __future__ import annotations

import random

from prb_tasks.data.personalized_rb.sources import load_rows
from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.replies.order import official_positions


def _reference(n: int) -> list[bool]:
    # Exactly what the protocol describes: seed the global generator once per
    # subset, then one draw per row in dataset order.
    state = random.getstate()
    try:
        random.seed(42)
        return [random.random() < 0.5 for _ in range(n)]
    finally:
        random.setstate(state)


def test_matches_seeded_global_random_draws():
    for n in (1, 12, 767, 989, 1074):
        assert official_positions(n) == _reference(n)


def test_known_prefix():
    # random.seed(42) -> 0.639..., 0.025..., 0.275..., 0.223..., 0.736...
    assert official_positions(5) == [False, True, True, True, False]


def test_docs_follow_dataset_order_and_leave_global_random_alone():
    random.seed(7)
    expected_next = random.random()
    random.seed(7)
    for subset in SUBSETS:
        rows = load_rows(subset, "sample")
        docs = build_docs(subset.short, "official", data_dir="sample")
        assert [d["id"] for d in docs] == [r.id for r in rows]
        assert [d["chosen_position"] == "A" for d in docs] == _reference(len(rows))
    assert random.random() == expected_next


def test_both_order_docs_show_each_pair_twice():
    docs = build_docs("society", "both", data_dir="sample")
    by_pair: dict[str, list[str]] = {}
    for d in docs:
        by_pair.setdefault(d["pair_key"], []).append(d["chosen_position"])
    assert all(sorted(v) == ["A", "B"] for v in by_pair.values())

"""tests/schedule.py: the first slices worksteal deals out each start with slow tests."""

from __future__ import annotations

from tests.schedule import first_slices, worksteal_order


def _slices(order: list[str], workers: int) -> list[list[str]]:
    out, start = [], 0
    for size in first_slices(len(order), workers):
        out.append(order[start:start + size])
        start += size
    return out


def test_first_slices_match_worksteal():
    # WorkStealingScheduling.check_schedule: len(pending) // nodes_remaining, in turn.
    assert first_slices(10, 3) == [3, 3, 4]
    assert first_slices(5, 3) == [1, 2, 2]
    assert sum(first_slices(3743, 3)) == 3743


def test_each_slice_starts_with_its_share_of_slow_tests():
    # Collected with every slow test at the start of the list (the old order): the first
    # slice would have held all six.
    items = [f"slow{i}" for i in range(6)] + [f"quick{i}" for i in range(30)]
    order = worksteal_order(items, 3, lambda t: t.startswith("slow"), lambda t: t)
    assert sorted(order) == sorted(items)
    for part in _slices(order, 3):
        assert [t for t in part if t.startswith("slow")] == part[:2], part
    # The quick ones keep their collected order.
    assert [t for t in order if t.startswith("quick")] == [f"quick{i}" for i in range(30)]


def test_a_unit_stays_on_one_worker():
    items = [f"train{i}" for i in range(5)] + ["slowA", "slowB"] + [f"quick{i}" for i in range(60)]
    order = worksteal_order(items, 3, lambda t: t.startswith(("train", "slow")),
                            lambda t: "train" if t.startswith("train") else t)
    parts = _slices(order, 3)
    holding = [i for i, part in enumerate(parts) if any(t.startswith("train") for t in part)]
    assert len(holding) == 1 and parts[holding[0]][:5] == [f"train{i}" for i in range(5)]
    # The two other slow tests go to the other two workers.
    assert sorted(p[0] for i, p in enumerate(parts) if i != holding[0]) == ["slowA", "slowB"]


def test_serial_or_one_worker_keeps_the_order():
    items = ["a", "b", "c"]
    assert worksteal_order(items, 1, lambda t: t == "c", lambda t: t) == items

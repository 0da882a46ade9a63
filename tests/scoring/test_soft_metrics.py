"""Soft accuracy, calibration error and accuracy against coverage, on hand-computed pairs."""

from __future__ import annotations

import math

import pytest

from prb_tasks.replies.soft_verdict import NO_SOFT_MARK, SoftVerdict, with_mark
from prb_tasks.scoring.metrics import process_judge_both
from prb_tasks.scoring.soft import (
    SoftPair,
    acc_cov20,
    acc_cov60,
    acc_cov100,
    accuracy_at_coverage,
    calibration_error,
    reliability,
    soft_accuracy,
    soft_coverage,
    soft_pairs,
)
from prb_tasks.scoring.soft_lines import soft_lines


def docs(pair: str, p_when_chosen_a: float | None, p_when_chosen_b: float | None) -> list[tuple[dict, str]]:
    """The two orders of a pair, each reply marked with its p_first (None: no soft verdict)."""
    out = []
    for position, p in (("A", p_when_chosen_a), ("B", p_when_chosen_b)):
        letter = "A" if p is None or p >= 0.5 else "B"
        # A reply to a request for logprobs whose verdict token was not found is marked as having none.
        text = NO_SOFT_MARK + f"Result: {letter}" if p is None else with_mark(f"Result: {letter}", SoftVerdict(p, 1.0))
        out.append(({"pair_key": pair, "chosen_position": position}, text))
    return out


def items(*pairs: tuple[str, float | None, float | None]) -> list:
    return [process_judge_both(doc, [text])["soft_acc"] for pair in pairs for doc, text in docs(*pair)]


def test_a_pair_averages_its_two_orders_so_position_preference_cancels() -> None:
    # A judge leaning to A: 0.9 for A when chosen is A, 0.7 for A when chosen is B (so 0.3 for chosen).
    pairs, total = soft_pairs(items(("p1", 0.9, 0.7)))
    assert total == 1 and pairs == [SoftPair(pytest.approx(0.6))]
    assert pairs[0].confidence == pytest.approx(0.6) and pairs[0].correct == 1.0
    assert SoftPair(0.5).correct == 0.5 and SoftPair(0.2).correct == 0.0 and SoftPair(0.2).confidence == 0.8


def test_pairs_without_both_soft_verdicts_are_counted_apart() -> None:
    data = items(("p1", 0.9, 0.1), ("p2", None, 0.2), ("p3", None, None))
    assert soft_coverage(data) == pytest.approx(1 / 3) and soft_coverage(data).measured == 3
    assert soft_accuracy(data) == pytest.approx(0.9) and soft_accuracy(data).measured == 1
    # A pair missing an order (--limit) has no soft score either.
    half = [process_judge_both(doc, [text])["soft_acc"] for doc, text in docs("p4", 0.8, 0.2)[:1]]
    assert soft_pairs(half) == ([], 1)
    assert math.isnan(soft_accuracy([])) and math.isnan(calibration_error([]))


def test_calibration_error_by_hand() -> None:
    # Scores 0.95, 0.95 (right), 0.05 (confident and wrong), 0.6 (right), 0.4 (wrong).
    data = items(("a", 0.95, 0.05), ("b", 0.95, 0.05), ("c", 0.05, 0.95), ("d", 0.6, 0.4), ("e", 0.4, 0.6))
    bins = reliability(soft_pairs(data)[0])
    # Confidences: 0.95 x3 in the last bin (accuracy 2/3), 0.6 x2 in bin 0.60-0.65 (accuracy 1/2).
    assert [(round(b.low, 2), b.pairs, round(b.accuracy, 4)) for b in bins] == [(0.6, 2, 0.5), (0.95, 3, 0.6667)]
    expected = (3 * abs(2 / 3 - 0.95) + 2 * abs(0.5 - 0.6)) / 5
    assert calibration_error(data) == pytest.approx(expected)
    # Perfectly calibrated: confidence 1 and always right.
    assert calibration_error(items(("x", 1.0, 0.0), ("y", 1.0, 0.0))) == 0.0


def test_accuracy_against_coverage_abstains_below_a_confidence() -> None:
    pairs = [SoftPair(s) for s in (0.99, 0.95, 0.9, 0.8, 0.3, 0.6, 0.45, 0.5, 0.4, 0.55)]
    # Ranked by confidence: .99 .95 .9 .8 (right) .7 (wrong) .6 (right) .55 .55 (wrong, right) .6 (wrong) .5 (tie).
    assert accuracy_at_coverage(pairs, 20) == 1.0
    assert accuracy_at_coverage(pairs, 40) == 1.0
    # Top 6: .99 .95 .9 .8 right, .7 wrong, then one of the two at .6 (one right, one wrong): counts 0.5.
    assert accuracy_at_coverage(pairs, 60) == pytest.approx((4 + 0 + 0.5) / 6)
    assert accuracy_at_coverage(pairs, 100) == pytest.approx((4 + 0 + 1 + 0 + 0 + 1 + 0.5) / 10)
    data = items(("a", 0.95, 0.05), ("b", 0.7, 0.3), ("c", 0.2, 0.8), ("d", 0.6, 0.4), ("e", 0.45, 0.55))
    assert acc_cov20(data) == 1.0 and acc_cov20(data).measured == 1
    assert acc_cov60(data) == pytest.approx(2 / 3)
    assert acc_cov100(data) == pytest.approx(3 / 5)


def test_the_line_under_the_table_fits_and_says_what_it_measured() -> None:
    row = {"soft_acc,none": 0.8123, "soft_cover,none": 0.75, "ece,none": 0.0412, "acc_cov20,none": 1.0,
           "acc_cov40,none": 0.97, "acc_cov60,none": 0.9, "acc_cov80,none": 0.84, "acc_cov100,none": 0.8}
    lines = soft_lines("personalized_rb_sample", row)
    text = " ".join(lines)
    assert all(len(line) <= 120 for line in lines) and len(lines) == 2
    assert "75% of pairs have one in both orders" in text and "soft_acc 81.2, ECE 4.1" in text
    assert "60% 90.0" in text.replace("\n", " ")
    assert soft_lines("x", {"acc,none": 0.5, "soft_acc,none": float("nan")}) == []


def test_only_replies_to_a_request_for_logprobs_give_soft_metrics() -> None:
    doc = {"pair_key": "p", "chosen_position": "A"}
    assert "soft_acc" not in process_judge_both(doc, ["Result: A"])  # a run without logprobs=
    # Asked for, but no verdict to read them at: the pair counts, without a soft score.
    unread = process_judge_both(doc, [NO_SOFT_MARK + "I cannot tell."])
    assert unread["soft_acc"] == ("p", ("A", None)) and unread["parse_fail"] == 1
    other = process_judge_both({"pair_key": "p", "chosen_position": "B"},
                               [with_mark("Result: A", SoftVerdict(0.9, 1.0))])
    assert soft_coverage([unread["soft_cover"], other["soft_cover"]]) == 0.0


def _task_yamls_judged_in_both_orders() -> list[tuple[str, str]]:
    """(path, text) of each task YAML that lists metrics for a both-order judge (itself or through its include)."""
    import re
    from pathlib import Path

    import prb_tasks

    root = Path(prb_tasks.__file__).parent / "tasks"
    found = []
    for path in sorted(root.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "metric_list:" not in text:
            continue
        own = re.search(r"^process_results:.*$", text, re.M)
        include = re.search(r"^include:\s*(\S+)", text, re.M)
        scored_by = own.group(0) if own else ""
        if not own and include:
            inc = (path.parent / include.group(1)).read_text(encoding="utf-8")
            match = re.search(r"^process_results:.*$", inc, re.M)
            scored_by = match.group(0) if match else ""
        if "judge_both" in scored_by:
            found.append((str(path.relative_to(root)), text))
    return found


def test_every_both_order_judge_task_lists_the_soft_metrics() -> None:
    """A family added later (PersonalRewardBench's judge tasks were) keeps the soft verdicts of logprobs= runs."""
    from prb_tasks.scoring.soft import METRICS

    tasks = _task_yamls_judged_in_both_orders()
    assert any(path.startswith("personal_reward_bench/") for path, _ in tasks)
    assert len(tasks) >= 6
    missing = {path: [m for m in METRICS if f"- metric: {m}\n" not in text] for path, text in tasks}
    assert {path: names for path, names in missing.items() if names} == {}

"""The compact table of a run of best-of-N / style-matrix benchmarks (RewardBench 2, RM-Bench):
items, not pairs, and no empty acc / interval columns; a pairwise run keeps its columns."""

from __future__ import annotations

from prb_tasks.scoring.legend import legend_lines
from prb_tasks.scoring.run_table import compact_lines

RB2 = {
    "results": {"rewardbench2": {"alias": "rewardbench2", "score,none": 0.303},
                "rewardbench2_math": {"alias": " - Math", "score,none": 0.25, "top1,none": 0.25}},
    "group_subtasks": {"rewardbench2": ["rewardbench2_math"]},
    "n-samples": {"rewardbench2_math": {"original": 4, "effective": 4}},
    "configs": {"rewardbench2_math": {"output_type": "multiple_choice"}},
}


def test_best_of_n_rows_count_items_and_show_no_acc_columns() -> None:
    lines, shown = compact_lines(RB2, {"rewardbench2", "rewardbench2_math"})
    assert lines[0].split() == ["task", "items", "score", "%", "top1", "%"]
    assert lines[1].split() == ["rewardbench2", "4", "30.3", "-"]
    assert lines[2].split() == ["Math", "4", "25.0", "25.0"]
    legend = legend_lines(RB2, {"rewardbench2", "rewardbench2_math"}, shown)
    assert legend[-1].startswith("items: items scored")
    assert not any("95% CI" in line or line.startswith("acc:") for line in legend)


def test_a_pairwise_row_keeps_pairs_acc_and_interval() -> None:
    mixed = {**RB2, "results": {**RB2["results"], "pairs_task": {"acc,none": 0.5, "acc_stderr,none": 0.1}},
             "n-samples": {**RB2["n-samples"], "pairs_task": {"effective": 10}}}
    lines, shown = compact_lines(mixed, {"rewardbench2", "rewardbench2_math", "pairs_task"})
    assert lines[0].split()[:5] == ["task", "n", "acc", "%", "95%"]
    assert "acc" in shown and "_items" not in shown
    assert any(line.split()[:4] == ["pairs_task", "10", "50.0", "30.4-69.6*"] for line in lines)

"""The compact table of a run of best-of-N / style-matrix benchmarks (RewardBench 2, RM-Bench):
items, not pairs, and no empty acc / interval columns; a pairwise run keeps its columns."""

from __future__ import annotations

from prb_tasks.report.run_table import compact_lines
from prb_tasks.scoring.legend import legend_lines

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
    assert lines[1].split()[:4] == ["pairs_task", "10", "50.0", "30.4-69.6*"]
    # The best-of-N rows get a table of their own (before: one table with every column of both,
    # 140 columns for a run of personalized_rb_sample_scalar, rewardbench2 and rmbench).
    assert lines[2:] == compact_lines(RB2, {"rewardbench2", "rewardbench2_math"})[0]
    assert "acc" in shown and "_items" in shown and "score" in shown


def test_a_table_wider_than_120_columns_is_cut_into_parts_that_repeat_the_task_column() -> None:
    # A judge run's columns under a long task name: 150 columns and more in one table.
    name = "personalized_custom_fewshot_judge_similar"
    metrics = ("acc", "acc_macro", "acc_pair", "consistency", "double_game", "pos_a_rate", "parse_fail")
    wide = {"results": {name: {"alias": name, **{f"{m},none": 0.5 for m in metrics}}},
            "n-samples": {name: {"effective": 3}}, "configs": {name: {"output_type": "generate_until"}}}
    lines, _ = compact_lines(wide, {name})
    assert max(len(line) for line in lines) <= 120
    heads = [line for line in lines if line.startswith("task")]
    rows = [line for line in lines if line.startswith(name)]
    assert len(heads) == len(rows) >= 2
    shown = [cell for head in heads for cell in head.split()[1:] if cell != "%"]
    assert shown == ["pairs", "acc", "95%", "CI", *metrics[1:]]  # every column once, in order


def test_a_policy_run_counts_its_replies_not_its_questions() -> None:
    """personalized_rb_bon_sample writes 16 candidates for each of 6 questions: 96 replies (was
    `ratings 6`, a column the legend said counts responses a judge rated)."""
    name = "personalized_rb_bon_sample"
    run = {"results": {name: {"alias": name, "candidate_words,none": 40.0, "empty_candidate,none": 0.0,
                              "failed_candidate,none": 0.0}},
           "n-samples": {name: {"original": 6, "effective": 6}},
           "configs": {name: {"output_type": "generate_until", "repeats": 16}}}
    lines, shown = compact_lines(run, {name})
    assert lines[0].split()[:2] == ["task", "replies"]
    assert lines[1].split()[:2] == [name, "96"]
    legend = legend_lines(run, {name}, shown)
    assert legend[-1].startswith("replies: what the model wrote, one request each")


def test_a_rating_judge_still_counts_ratings() -> None:
    name = "rewardbench2_judge_math"
    run = {"results": {name: {"alias": name, "score,none": 0.25, "parse_fail,none": 0.1}},
           "n-samples": {name: {"effective": 8}},
           "configs": {name: {"output_type": "generate_until", "repeats": 1}}}
    lines, shown = compact_lines(run, {name})
    assert lines[0].split()[:2] == ["task", "ratings"] and lines[1].split()[:2] == [name, "8"]
    assert legend_lines(run, {name}, shown)[-1].startswith("ratings: responses the judge rated")

"""Group rows weight subsets by what a metric measured; a subset that measured nothing does not
turn the group into NaN (issue 14, item 11)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.scoring.group_weights import Measured, regroup
from prb_tasks.scoring.metrics import pair_consistency, share_of_a
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from tests.conftest import sample_rows
from tests.runner import metric, read_results, run_cli

TASK = "personalized_rb_sample"


def test_regroup_weights_by_measured_items_and_skips_empty_subsets():
    values = [(Measured(1.0, 24), 24), (Measured(0.0, 12), 24), (Measured(math.nan, 0), 24)]
    assert regroup(values, weight_by_size=True) == pytest.approx(24 / 36)
    assert regroup(values, weight_by_size=True).measured == 36
    assert regroup(values, weight_by_size=False) == pytest.approx(0.5)
    assert math.isnan(regroup([(Measured(math.nan, 0), 10)], True))
    assert regroup([(0.5, 10), (0.7, 30)], True) is None  # lm-eval's own values: left to lm-eval


def test_aggregations_report_how_much_they_measured():
    rate = share_of_a(["A", "B", None, "A"])
    assert rate == pytest.approx(2 / 3) and rate.measured == 3
    assert share_of_a([None]).measured == 0 and math.isnan(share_of_a([None]))
    assert pair_consistency([("p", "chosen"), ("p", "chosen"), ("q", "chosen")]).measured == 1


def _policy():
    """Art: never a verdict. Lifestyle: always A. Society: B when chosen is shown first, else no verdict."""
    rows = {s.short: sample_rows(s.config) for s in SUBSETS}

    def policy(messages: list[Message], model: str) -> str:
        text = messages[-1]["content"]
        for short, subset_rows in rows.items():
            for row in subset_rows:
                if row["question"] in text:
                    if short == "art":
                        return "Both answers have merits; I cannot decide."
                    if short == "lifestyle":
                        return "Result: A"
                    chosen_first = text.index(row["chosen"]) < text.index(row["rejected"])
                    return "Result: B" if chosen_first else "No verdict from me."
        raise AssertionError("unknown question")

    return policy


def test_group_pos_a_rate_through_prb_eval_when_one_subset_has_no_verdict(tmp_path: Path):
    out = tmp_path / "out"
    with FakeLLMServer(_policy(), record_requests=False) as srv:
        args = (f"model=openai/fake,api_base={srv.openai_base},cache_dir={tmp_path / 'cache'},"
                "num_concurrent=8,backoff_base=0.01,backoff_max=0.1")
        done = run_cli(["eval", "--model", "prb-judge", "--model_args", args, "--tasks", TASK,
                        "--output_path", str(out)], cwd=tmp_path, env={"OPENAI_API_KEY": "sk-test"})
    assert done.returncode == 0, done.stderr[-3000:]
    results = read_results(out)
    assert math.isnan(metric(results, "personalized_rb_sample_art", "pos_a_rate"))
    assert metric(results, "personalized_rb_sample_lifestyle", "pos_a_rate") == 1.0
    assert metric(results, "personalized_rb_sample_society", "pos_a_rate") == 0.0
    # 24 readable verdicts naming A (lifestyle) and 12 naming B (society): 24 / 36, not NaN,
    # and not the 0.5 that weighting by documents (24 and 24) would give.
    assert metric(results, TASK, "pos_a_rate") == pytest.approx(24 / 36)
    assert results["results"][TASK]["sample_count"]["pos_a_rate,none"] == 36
    # consistency measured all 36 pairs (unparsed = inconsistent; "always A" flips with the order).
    assert metric(results, TASK, "consistency") == 0.0
    assert results["results"][TASK]["sample_count"]["consistency,none"] == 36
    assert metric(results, TASK, "parse_fail") == pytest.approx(36 / 72)
    # The compact table shows the art row's unmeasured pos_a_rate as "-", never as a number.
    lines = done.stdout.splitlines()
    # A wide table is shown in parts that fit 120 columns: the art row under pos_a_rate's header.
    at = next(i for i, line in enumerate(lines) if line.startswith("task") and "pos_a_rate %" in line)
    header = lines[at]
    start = header.index("pos_a_rate %")
    art = next(line for line in lines[at:] if line.strip().startswith("Art_and_Entertainment"))
    assert art[start:start + len("pos_a_rate %")].strip() == "-", (header, art)


def test_every_group_row_aggregates_the_metrics_all_its_subtasks_report():
    """rewardbench2_judge's group row showed ``parse_fail -`` while each of its six subsets showed
    100.0 (issue 63, item 5): a metric every subtask reports is aggregated into the group row too."""
    from prb_tasks.common.taskindex import _scan

    tasks, groups = _scan()
    assert any(data["group"] == "rewardbench2_judge" for _path, data in groups)
    missing = {}
    for _path, data in groups:
        if "aggregate_metric_list" not in data:
            continue  # a group without a row of its own (lm-eval prints only its subtasks)
        members = [tasks[t][1] for t in data["task"] if isinstance(t, str) and t in tasks]
        shared = set.intersection(*({m["metric"] for m in d.get("metric_list") or []} for d in members))
        aggregated = {m["metric"] for m in data["aggregate_metric_list"]}
        if shared - aggregated:
            missing[data["group"]] = sorted(shared - aggregated)
    assert missing == {}

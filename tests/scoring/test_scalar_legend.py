"""prb-rm's legend does not speak of a judge's two orders (issue 63 item 5)."""

from __future__ import annotations

from prb_tasks.scoring.legend import legend_lines

SCALAR = {
    "results": {"personalized_rb_sample_scalar_art": {"alias": "art", "acc,none": 0.6, "acc_stderr,none": 0.1}},
    "configs": {"personalized_rb_sample_scalar_art": {"output_type": "multiple_choice"}},
    "config": {"model": "prb-rm"},
}
JUDGE = {
    "results": {"personalized_rb_sample_art": {"alias": "art", "acc,none": 0.6, "acc_stderr,none": 0.1}},
    "configs": {"personalized_rb_sample_art": {"output_type": "generate_until"}},
    "config": {"model": "prb-judge"},
}


def test_a_scalar_runs_interval_line_names_pairs_only() -> None:
    legend = legend_lines(SCALAR, {"personalized_rb_sample_scalar_art"}, ["acc"])
    assert legend[-1] == "95% CI: bootstrap over pairs within each subset; pairs: pairs scored"
    assert not any("two orders" in line for line in legend)


def test_a_judge_runs_interval_line_keeps_its_two_orders() -> None:
    legend = legend_lines(JUDGE, {"personalized_rb_sample_art"}, ["acc"])
    assert "a judge's two orders of a pair count once" in legend[-1]

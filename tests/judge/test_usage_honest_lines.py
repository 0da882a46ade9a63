"""The judge's summary lines say only what happened (issue 63 item 5)."""

from __future__ import annotations

from prb_tasks.judge.usage import UsageTracker, failed_line


def test_failed_judgments_name_retries_only_when_there_were_some() -> None:
    summary = {"errors": 16, "judgments": 72, "errors_by_kind": {"malformed": 16}, "retries": 0, "cache_mode": "on"}
    assert failed_line(summary).startswith(  # type: ignore[union-attr]
        "prb eval: 16 of 72 judgments failed (not retried) (malformed 16) and count as wrong")
    summary["retries"] = 5
    assert "judgments failed after every retry (malformed 16)" in failed_line(summary)  # type: ignore[operator]


def test_no_cache_hits_no_cache_cost() -> None:
    usage = UsageTracker(model="openai/fake", transport="direct", judgments=2)
    cost = [line for line in usage.render().splitlines() if line.startswith("  cost ")]
    assert len(cost) == 1 and ";" not in cost[0] and "originally cost" not in usage.render()


def test_the_no_verdict_line_names_log_samples_only_when_it_was_given() -> None:
    usage = UsageTracker(model="openai/fake", transport="direct", judgments=2)
    usage.count_verdicts(["no verdict here", "nor here"])
    logged = usage.no_verdict_warning(reask=False, samples_logged=True)
    unlogged = usage.no_verdict_warning(reask=False, samples_logged=False)
    assert logged is not None and "check the replies in the --log_samples output" in logged
    assert unlogged is not None and "re-run with --output_path DIR --log_samples to see the replies" in unlogged
    assert "in the --log_samples output" not in unlogged

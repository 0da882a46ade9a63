"""Issue 48 item 7: a run in which judgments failed after every retry exited 0 with nothing
saying that a re-run retries them; the table's last line says it now."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.testing.fake_server import FakeLLMServer
from tests.e2e.test_judge_e2e import TASK, chosen_policy
from tests.runner import flat, run_cli


@pytest.mark.slow
def test_failed_judgments_are_named_in_the_last_line_and_a_rerun_retries_only_them(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer(chosen_policy(), fault_script=["500", "500"]) as srv:
        args = ["eval", "--model", "prb-judge", "--model_args",
                f"model=openai/fake,api_base={srv.openai_base},cache_dir={cache},max_retries=0,num_concurrent=1",
                "--tasks", TASK, "--limit", "2"]
        first = run_cli(args, cwd=tmp_path)
        sent = len(srv.requests)
        again = run_cli(args, cwd=tmp_path)
        resent = len(srv.requests) - sent
    assert first.returncode == 0, first.stderr[-2000:]
    # The last sentence of the output (wrapped by words to 120 columns, so read flat).
    lines = first.stdout.strip().splitlines()
    start = max(i for i, line in enumerate(lines) if not line.startswith(" "))
    assert lines[start].startswith("prb eval: 2 of"), first.stdout[-2000:]
    assert flat("\n".join(lines[start:])) == (
        f"prb eval: 2 of {sent} judgments failed (not retried) (server 2) and count as wrong "
        "(error_rate); re-run the same command to retry only them: answered judgments are cached "
        "and not sent again"), first.stdout[-2000:]
    assert again.returncode == 0 and resent == 2  # only the two failed ones went out again
    assert "judgments failed" not in again.stdout

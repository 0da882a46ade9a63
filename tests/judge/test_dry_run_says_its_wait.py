"""The README's dry run says what it waits for while litellm loads (issue 63 item 7: 40+ s at
load 10-17 with nothing on the screen)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner import run_cli


@pytest.mark.slow
def test_the_dry_run_names_the_litellm_wait_before_its_estimate(tmp_path: Path) -> None:
    proc = run_cli(["eval", "--model", "prb-judge", "--model_args", "config=gpt-4.1,dry_run=true", "--tasks",
                    "personalized_rb_sample_art", "--limit", "2"], cwd=tmp_path,
                   env={"PRB_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("prb-judge: dry run: loading litellm for its token counters and price list (seconds; longer on a busy "
            "machine) ...") in proc.stderr.splitlines()
    assert proc.stdout.startswith("prb-judge dry run for openai/gpt-4.1: nothing was sent")

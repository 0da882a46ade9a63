"""The planner's stage lines fit 120 columns (issue 63 item 8: the stage line reached 161)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.cli.planner_cli import run_planner


def test_stage_lines_fit_120_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    deep = "runs/gpt-4.1-mini-2025-04-14-planner"
    stages: list[list[str]] = []

    def fake_eval(argv: list[str]) -> int:
        stages.append(argv)
        return 7  # stop after stage 1: its line is the one that was too wide

    code = run_planner(["--model", "prb-judge", "--model_args", "model=openai/gpt-4.1-mini-2025-04-14",
                        "--tasks", "personalized_rb_planner", "--output_path", deep], fake_eval)
    out = capsys.readouterr().out
    assert code == 7 and len(stages) == 1
    assert out.startswith("prb: planner stage 1/2: openai/gpt-4.1-mini-2025-04-14 infers each user's expectations")
    assert max(len(line) for line in out.splitlines()) <= 120, out
    assert f"-> {deep}/plan" in " ".join(line.strip() for line in out.splitlines())

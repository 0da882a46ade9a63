"""--predict_only's table of '-' says that no metrics were computed (issue 63 item 5)."""

from __future__ import annotations

from pathlib import Path

from tests.runner import flat, run_cli


def test_predict_only_says_no_metrics_were_computed(tmp_path: Path) -> None:
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=bm25", "--tasks",
                    "personalized_rb_sample_scalar_art", "--predict_only", "--output_path", str(tmp_path / "out")],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("--predict_only: lm-eval wrote the replies (the samples files) and computed no metrics, so the table "
            "shows '-'; run without --predict_only for the numbers") in flat(proc.stdout)
    assert max(len(line) for line in proc.stdout.splitlines()) <= 120
    assert list((tmp_path / "out").rglob("samples_*.jsonl"))

"""``prb compare`` puts a judge run and a scalar run side by side from real result files."""

from __future__ import annotations

import json

from prb_tasks.report.compare import build_rows, compare
from prb_tasks.testing.fake_server import FakeLLMServer, always
from tests.runner import run_cli


def test_compare_judge_and_scalar_runs(tmp_path):
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length",
                    "--tasks", "personalized_rb_sample_scalar", "--output_path", str(out),
                    "--log_samples"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with FakeLLMServer(policy=always("A")) as server:
        proc = run_cli(["eval", "--model", "local-chat-completions", "--model_args",
                        f"model=fake,base_url={server.openai_base}/chat/completions,num_concurrent=8",
                        "--apply_chat_template", "--tasks", "personalized_rb_sample",
                        "--output_path", str(out), "--log_samples"],
                       cwd=tmp_path, env={"OPENAI_API_KEY": "sk-compare-test"})
        assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r.task: r for r in build_rows([out])}
    judge, scalar = rows["personalized_rb_sample"], rows["personalized_rb_sample_scalar"]
    assert judge.kind == "judge" and scalar.kind == "scalar"
    assert judge.pairs == 36 and scalar.pairs == 36
    # "Always A" is right on exactly one order of every pair: every pair scores 0.5,
    # so the pair-clustered interval collapses to the point.
    assert judge.acc == 0.5 and (judge.ci_low, judge.ci_high) == (0.5, 0.5)
    assert judge.pos_a_rate == 1.0 and judge.consistency == 0.0
    assert judge.longer_pref == 0.5  # the sample is length-balanced
    assert scalar.acc == 0.5 and scalar.ci_low < 0.5 < scalar.ci_high
    assert set(scalar.per_subset) == {"art", "life", "soc"}
    table = compare([out])
    assert "personalized_rb_sample_scalar" in table and "prb-rm (scorer=length)" in table
    assert "sk-compare-test" not in table
    assert json.loads(compare([out], fmt="json"))[0]["task"].startswith("personalized_rb_sample")


def test_compare_command_line(tmp_path):
    proc = run_cli(["compare", str(tmp_path / "missing")], cwd=tmp_path)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = run_cli(["compare", str(tmp_path / "empty")], cwd=tmp_path)
    assert proc.returncode == 0 and "no results of prb tasks" in proc.stdout

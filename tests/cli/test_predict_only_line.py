"""--predict_only's table of '-' says that no metrics were computed (issue 63 item 5)."""

from __future__ import annotations

from pathlib import Path

from tests.runner import flat, run_cli


def test_predict_only_says_no_metrics_were_computed(tmp_path: Path) -> None:
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=bm25", "--tasks",
                    "personalized_rb_sample_scalar_art", "--predict_only", "--output_path", str(tmp_path / "out")],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("Predict only: lm-eval wrote the replies (the samples files) and computed no metrics, so the table "
            "shows '-'; run without --predict_only for the numbers") in flat(proc.stdout)
    assert max(len(line) for line in proc.stdout.splitlines()) <= 120
    assert list((tmp_path / "out").rglob("samples_*.jsonl"))


def test_a_limit_on_judge_tasks_says_it_counted_judgments(tmp_path: Path) -> None:
    from prb_tasks.testing.fake_server import FakeLLMServer, always

    with FakeLLMServer(policy=always("A")) as srv:
        proc = run_cli(["eval", "--model", "local-chat-completions", "--model_args",
                        f"model=fake,base_url={srv.openai_base}/chat/completions", "--apply_chat_template",
                        "--tasks", "personalized_rb_sample_art", "--limit", "4"], cwd=tmp_path,
                       env={"OPENAI_API_KEY": "sk-prb-test-0000"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("Limit: --limit 4 counted documents: on the judge tasks each is one judgment (one request), and a pair "
            "is judged in each order it is shown in, so this is fewer pairs than 4 (n counts the judgments)"
            ) in flat(proc.stdout)
    scalar = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                      "personalized_rb_sample_scalar_art", "--limit", "4"], cwd=tmp_path)
    assert scalar.returncode == 0 and "Limit:" not in scalar.stdout  # a scalar task's document is a pair

"""Our judge and scalar tasks run end to end through lm-eval's real code paths.

Judges here are lm-eval's own built-in chat backends pointed at a local fake
OpenAI-compatible server, so these tests cover the plain-``lm_eval`` route users take.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.fake_server import FakeLLMServer, always, garbage, prefer_texts
from tests.conftest import sample_rows
from tests.runner import metric, read_results, read_samples, run_cli, sent_prompt

FAKE_KEY = "sk-prb-test-0000"


def _chosen_texts() -> list[str]:
    return [r["chosen"] for s in SUBSETS for r in sample_rows(s.config)]


def _judge(server: FakeLLMServer, tmp_path, task: str = "personalized_rb_sample",
           backend: str = "local-chat-completions", extra: list[str] | None = None):
    out = tmp_path / "runs"
    if backend == "local-chat-completions":
        model_args = f"model=fake-judge,base_url={server.openai_base}/chat/completions,num_concurrent=8,max_retries=1"
    else:
        model_args = f"model=openai/fake-judge,base_url={server.openai_base}"
    proc = run_cli(
        ["eval", "--model", backend, "--model_args", model_args, "--apply_chat_template",
         "--tasks", task, "--output_path", str(out), "--log_samples", *(extra or [])],
        cwd=tmp_path, env={"OPENAI_API_KEY": FAKE_KEY},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return read_results(out), out, proc


def test_judge_that_always_picks_chosen_scores_one(tmp_path):
    with FakeLLMServer(policy=prefer_texts(_chosen_texts())) as server:
        results, out, _ = _judge(server, tmp_path)
        assert server.stats()["policy_misses"] == 0
    for name in ("acc", "acc_macro", "acc_pair", "consistency", "double_game"):
        assert metric(results, "personalized_rb_sample", name) == 1.0
    assert metric(results, "personalized_rb_sample", "pos_a_rate") == 0.5
    for s in SUBSETS:
        assert metric(results, f"personalized_rb_sample_{s.short}", "acc") == 1.0
    samples = read_samples(out, "personalized_rb_sample_art")
    assert len(samples) == 24
    # The system prompt and the rendered user prompt reach the API as chat messages.
    sent = samples[0]["arguments"]["gen_args_0"]["arg_0"]
    sent = sent[0] if isinstance(sent, list) and len(sent) == 1 else sent
    sent = json.loads(sent) if isinstance(sent, str) else sent
    assert [m["role"] for m in sent] == ["system", "user"]
    assert "Response A:" in sent[1]["content"]


def test_judge_that_always_answers_a(tmp_path):
    with FakeLLMServer(policy=always("A")) as server:
        results, _, _ = _judge(server, tmp_path)
        assert server.stats()["total_requests"] >= 72
    assert metric(results, "personalized_rb_sample", "acc") == 0.5
    assert metric(results, "personalized_rb_sample", "consistency") == 0.0
    assert metric(results, "personalized_rb_sample", "acc_pair") == 0.0
    assert metric(results, "personalized_rb_sample", "pos_a_rate") == 1.0
    # Every pair nets +1 - 1 = 0 in the double game, in every subset and in the group.
    assert metric(results, "personalized_rb_sample", "double_game") == 0.0
    for s in SUBSETS:
        assert metric(results, f"personalized_rb_sample_{s.short}", "double_game") == 0.0


def test_garbage_is_parse_failure_not_a_letter(tmp_path):
    with FakeLLMServer(policy=garbage()) as server:
        results, _, _ = _judge(server, tmp_path)
    assert metric(results, "personalized_rb_sample", "parse_fail") == 1.0
    assert metric(results, "personalized_rb_sample", "acc") == 0.0


@pytest.mark.slow
def test_official_variant_on_sample_through_plain_lm_eval_with_litellm(tmp_path):
    # Plain lm_eval with --include_path and lm-eval's built-in litellm backend.
    import shutil
    import sys
    from pathlib import Path

    beside = Path(sys.executable).parent / "lm_eval"
    lm_eval = str(beside) if beside.exists() else shutil.which("lm_eval")
    assert lm_eval, "lm_eval console script not found next to python or on PATH"
    tasks_dir = run_cli(["tasks-dir"], cwd=tmp_path).stdout.strip()
    out = tmp_path / "runs"
    with FakeLLMServer(policy=always("A")) as server:
        proc = run_cli(
            ["--include_path", tasks_dir, "--model", "litellm",
             # lm-eval's litellm backend does not pass base_url on to litellm; litellm
             # reads the OpenAI base URL from the environment instead.
             "--model_args", "model=openai/fake-judge",
             "--apply_chat_template", "--tasks", "personalized_rb_official",
             "--metadata", json.dumps({"data_dir": "sample"}),
             "--output_path", str(out)],
            cwd=tmp_path, program=[lm_eval],
            env={"OPENAI_API_KEY": FAKE_KEY, "OPENAI_BASE_URL": server.openai_base,
                 "OPENAI_API_BASE": server.openai_base},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert server.stats()["total_requests"] == 36
    results = read_results(out)
    # With "always A", accuracy is the share of pairs where the seeded draw put chosen in A.
    from prb_tasks.replies.order import official_positions

    expected = [official_positions(12) for _ in SUBSETS]
    share = sum(sum(p) for p in expected) / 36
    assert metric(results, "personalized_rb_official", "acc") == pytest.approx(share)
    assert metric(results, "personalized_rb_official", "acc_official") == pytest.approx(share)


def _scalar_run(folder: Path, scorer: str) -> tuple[subprocess.CompletedProcess, Path]:
    out = folder / "runs"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", f"scorer={scorer}",
                    "--tasks", "personalized_rb_sample_scalar", "--output_path", str(out)], cwd=folder)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, out


@pytest.fixture(scope="module")
def length_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """prb-rm scorer=length on the scalar sample, run once for two tests (its numbers; its words)."""
    return _scalar_run(tmp_path_factory.mktemp("length"), "length")


@pytest.mark.parametrize("scorer", ["length", "bm25"])
def test_scalar_sample_with_offline_scorers(tmp_path, scorer, request):
    proc, out = request.getfixturevalue("length_run") if scorer == "length" else _scalar_run(tmp_path, scorer)
    results = read_results(out)
    acc = metric(results, "personalized_rb_sample_scalar", "acc")
    assert 0.0 <= acc <= 1.0
    assert metric(results, "personalized_rb_sample_scalar", "tie_rate") == 0.0
    if scorer == "length":
        # The sample is built so that length alone cannot solve it.
        assert 0.35 <= acc <= 0.65
        for s in SUBSETS:
            assert 0.35 <= metric(results, f"personalized_rb_sample_scalar_{s.short}", "acc") <= 0.65
    # Per-subset rows and the group's micro/macro numbers are both there.
    sizes = [12, 12, 12]
    per = [metric(results, f"personalized_rb_sample_scalar_{s.short}", "acc") for s in SUBSETS]
    assert acc == pytest.approx(sum(p * n for p, n in zip(per, sizes)) / sum(sizes))
    assert metric(results, "personalized_rb_sample_scalar", "acc_macro") == pytest.approx(sum(per) / 3)
    table = proc.stdout.splitlines()
    assert table[1].split() == ["task", "n", "acc", "%", "95%", "CI", "acc_macro", "%", "tie_rate", "%"]
    assert table[2].split()[:3] == ["personalized_rb_sample_scalar", "36", f"{100 * acc:.1f}"]
    assert [row.split()[0] for row in table[3:6]] == [s.config for s in SUBSETS]


def test_plugin_only_runs_skip_the_builtin_task_index(tmp_path):
    probe = (
        "import time, prb_tasks.plugin as p; p.activate(['personalized_rb_sample_scalar']);"
        "import lm_eval.tasks as t; s=time.perf_counter(); tm=t.TaskManager();"
        "print(len(tm.all_tasks), round(time.perf_counter()-s, 3))"
    )
    import sys

    proc = run_cli(["-c", probe], cwd=tmp_path, program=[sys.executable])
    assert proc.returncode == 0, proc.stderr
    count, seconds = proc.stdout.split()
    assert int(count) < 1000  # only ours (about 100), not the ~14,700 built-in names
    assert float(seconds) < 2.0


@pytest.mark.parametrize(
    "backend, args, env",
    [
        ("openai-chat-completions", "model=gpt-fake,base_url={openai}/chat/completions", {"OPENAI_API_KEY": FAKE_KEY}),
        ("anthropic-chat-completions", "model=claude-fake,base_url={root}/v1/messages",
         {"ANTHROPIC_API_KEY": FAKE_KEY}),
        ("litellm", "model=openai/fake-judge", {"OPENAI_API_KEY": FAKE_KEY, "OPENAI_BASE_URL": "{openai}"}),
    ],
)
@pytest.mark.slow
def test_builtin_chat_backends_run_the_judge_tasks(tmp_path, backend, args, env):
    out = tmp_path / "runs"
    with FakeLLMServer(policy=prefer_texts(_chosen_texts())) as server:
        fill = {"openai": server.openai_base, "root": server.url}
        proc = run_cli(
            ["eval", "--model", backend, "--model_args", args.format(**fill), "--apply_chat_template",
             "--tasks", "personalized_rb_sample", "--limit", "4", "--output_path", str(out)],
            cwd=tmp_path, env={k: v.format(**fill) for k, v in env.items()},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert server.stats()["total_requests"] == 12
    results = read_results(out)
    assert metric(results, "personalized_rb_sample", "acc") == 1.0
    assert metric(results, "personalized_rb_sample", "consistency") == 1.0


def test_bad_data_stops_the_run_with_one_line(tmp_path, all_sample_rows):
    from tests.conftest import write_layout

    rows = {k: [dict(r) for r in v] for k, v in all_sample_rows.items()}
    rows["Lifestyle_and_Personal_Development"][7].pop("rejected")
    write_layout(tmp_path / "data", rows, "parquet")
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length",
                    "--tasks", "personalized_rb_scalar", "--metadata",
                    json.dumps({"data_dir": str(tmp_path / "data")})], cwd=tmp_path)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("prb: bad row in ") and "row 8 " in last and "'rejected'" in last
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("task", ["personalized_rb_profile", "personalized_rb_oracle"])
def test_profile_and_oracle_variants_on_the_sample(tmp_path, task):
    out = tmp_path / "runs"
    with FakeLLMServer(policy=prefer_texts(_chosen_texts())) as server:
        proc = run_cli(
            ["eval", "--model", "local-chat-completions", "--model_args",
             f"model=fake,base_url={server.openai_base}/chat/completions,num_concurrent=4",
             "--apply_chat_template", "--tasks", task, "--limit", "4",
             "--metadata", json.dumps({"data_dir": "sample", "k": 3}), "--output_path", str(out),
             "--log_samples"],
            cwd=tmp_path, env={"OPENAI_API_KEY": FAKE_KEY},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert server.stats()["policy_misses"] == 0
    assert metric(read_results(out), task, "acc") == 1.0
    logged = read_samples(out, f"{task}_art")[0]
    sample, prompt = logged["doc"], sent_prompt(logged)
    assert "prompt" not in sample  # logged once, in the request
    if task.endswith("profile"):
        assert len(sample["post_ids"]) == 3 and "Post 3 (Category:" in prompt
    else:
        assert "normally hidden from the judge" in prompt


@pytest.mark.slow
def test_user_facing_output_explains_metrics_and_errors_are_one_line(tmp_path, length_run):
    proc, _ = length_run
    assert "Metrics:\n  acc: share of pairs where the chosen answer scored strictly higher" in proc.stdout
    assert "tie_rate:" in proc.stdout and "pos_a_rate" not in proc.stdout
    assert "Custom kwargs can be passed" not in proc.stderr

    wrong_model = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length",
                           "--tasks", "personalized_rb_sample", "--limit", "1"], cwd=tmp_path)
    assert wrong_model.returncode == 2 and "Traceback" not in wrong_model.stderr
    assert wrong_model.stderr.strip().splitlines()[-1].startswith("prb-rm is a scalar reward model")

    typo = run_cli(["eval", "--model", "prb-rm", "--tasks", "personalized_rb_sampel"], cwd=tmp_path)
    assert typo.returncode == 2 and "Traceback" not in typo.stderr
    assert typo.stderr.strip().splitlines()[-1].startswith(
        "prb eval: unknown task 'personalized_rb_sampel' (did you mean 'personalized_rb_sample'")

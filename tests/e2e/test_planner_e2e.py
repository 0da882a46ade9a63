"""The planner end to end: ``prb eval`` in subprocesses against the fake server.

The scripted judge prefers the chosen answer only when *every* gold rubric aspect of
the row appears in its prompt, and otherwise always answers A (so 50% over both
orders). With that judge, the oracle task scores 1.0 and the question-only task 0.5;
a planner that returns the gold aspects must bring the planned task to the oracle's
numbers, and a planner that returns nothing must bring it to the question-only ones.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.fake_server import FakeLLMServer, Message, prefer_texts
from tests.conftest import sample_rows
from tests.runner import flat, metric, read_results, read_samples, run_cli, sent_prompt

KEY = "sk-prb-planner-SECRET-77a1"
ENV = {"PRB_TEST_KEY": KEY}
ROWS = [r for s in SUBSETS for r in sample_rows(s.config)]
JUDGE_METRICS = ("acc", "acc_macro", "acc_pair", "consistency", "pos_a_rate", "parse_fail", "error_rate")


def policy() -> Any:
    prefer = prefer_texts([r["chosen"] for r in ROWS], [r["rejected"] for r in ROWS])

    def answer(messages: list[Message], model: str) -> str:
        prompt = messages[-1]["content"]
        row = next((r for r in ROWS if r["question"] in prompt), None)
        if model.endswith("planner-gold"):
            assert row is not None
            items = [f"{i}. **{a['aspect']}**" for i, a in enumerate(row["rubric_aspects"], 1)]
            return "Expectations:\n" + "\n".join(items)
        if model.endswith("planner-empty"):
            return ""
        if row is not None and all(a["aspect"] in prompt for a in row["rubric_aspects"]):
            return prefer(messages, model)
        return "No telling.\nResult: A"

    return answer


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeLLMServer(policy(), record_requests=False) as srv:
        yield srv


def judge_args(server: FakeLLMServer, cache: Path, planner: str | None = None) -> str:
    common = f"api_base={server.openai_base},api_key_env=PRB_TEST_KEY,cache_dir={cache},num_concurrent=8"
    args = f"model=openai/judge,{common}"
    if planner:
        args += f",planner_model=openai/{planner},planner_api_base={server.openai_base}"
    return args


def env(tmp_path: Path) -> dict[str, str]:
    """The test key, and prb's caches in the test folder."""
    return {**ENV, "PRB_CACHE_DIR": str(tmp_path / "prb-cache")}


def models_sent(server: FakeLLMServer) -> Counter:
    return Counter(server.stats()["models"])


def last_line(text: str) -> str:
    return [line for line in text.splitlines() if line.strip()][-1]


@pytest.mark.slow
def test_one_command_gold_planner_equals_the_oracle_and_reruns_from_cache(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    before = models_sent(server)
    args = ["eval", "--model", "prb-judge", "--model_args", judge_args(server, cache, "planner-gold"),
            "--tasks", "personalized_rb,personalized_rb_planner,personalized_rb_oracle",
            "--metadata", '{"data_dir": "sample"}', "--output_path", str(out), "--log_samples"]
    proc = run_cli(args, cwd=tmp_path, env=env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "planner stage 1/2" in proc.stdout and "planner stage 2/2" in proc.stdout
    sent = models_sent(server) - before
    assert sent == Counter({"planner-gold": 36, "judge": 3 * 72})

    # Stage 1: its own lm-eval run, plans recovered in full.
    plan = read_results(out / "plan")
    assert metric(plan, "personalized_rb_plan", "plan_recall") == 1.0
    assert metric(plan, "personalized_rb_plan", "plan_precision") == 1.0
    assert metric(plan, "personalized_rb_plan", "plan_empty") == 0.0
    stage1 = read_samples(out / "plan", "personalized_rb_plan_art")
    assert {s["doc"]["variant"] for s in stage1} == {"plan"} and len(stage1) == 12

    # Stage 2 next to the other settings: the ladder question-only < planned == oracle.
    results = read_results(out / "openai__judge")
    for name in JUDGE_METRICS:
        assert metric(results, "personalized_rb_planned", name) == metric(results, "personalized_rb_oracle", name), name
    assert metric(results, "personalized_rb_planned", "acc") == 1.0
    assert metric(results, "personalized_rb", "acc") == 0.5
    assert all(s["doc"]["plan_empty"] == 0 for s in read_samples(out / "openai__judge", "personalized_rb_planned_art"))
    planned = read_samples(out / "openai__judge", "personalized_rb_planned_society")
    assert {s["doc"]["variant"] for s in planned} == {"planned"}
    assert all(s["doc"]["plan_aspects"] for s in planned)
    assert any(p.name.startswith("usage_") for p in (out / "plan").rglob("*.json"))
    table = run_cli(["compare", str(out)], cwd=tmp_path, env=env(tmp_path))
    assert table.returncode == 0, table.stderr[-2000:]
    shown = flat(table.stdout)  # sentences are wrapped to 120 columns
    assert "personalized_rb, question + the aspects a planner inferred, on the bundled synthetic sample" in shown
    assert ("personalized_rb, question + the user's gold rubric aspects (diagnostic), on the bundled synthetic sample"
            in shown)
    assert "question only 50.0 -> planner aspects 100.0 -> oracle aspects (diagnostic) 100.0" in shown

    # The same command again: every answer comes from the cache.
    again = run_cli([*args[:-3], "--output_path", str(tmp_path / "again"), "--log_samples"],
                    cwd=tmp_path, env=env(tmp_path))
    assert again.returncode == 0, again.stderr[-3000:]
    assert models_sent(server) - before == sent
    assert metric(read_results(tmp_path / "again" / "openai__judge"), "personalized_rb_planned", "acc") == 1.0
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_one_command_empty_planner_is_a_clear_outcome_with_limit(tmp_path: Path, server: FakeLLMServer) -> None:
    out = tmp_path / "out"
    proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                    judge_args(server, tmp_path / "cache", "planner-empty"),
                    "--tasks", "personalized_rb_planner", "--limit", "4",
                    "--metadata", '{"data_dir": "sample"}', "--output_path", str(out), "--log_samples"],
                   cwd=tmp_path, env=env(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    plan = read_results(out / "plan")
    assert metric(plan, "personalized_rb_plan", "plan_empty") == 1.0
    assert metric(plan, "personalized_rb_plan", "plan_recall") == 0.0
    assert metric(plan, "personalized_rb_plan", "plan_size") == 0.0
    results = read_results(out / "openai__judge")
    assert metric(results, "personalized_rb_planned", "acc") == 0.5  # the judge saw no aspects
    planned = read_samples(out / "openai__judge", "personalized_rb_planned_art")
    assert all(s["doc"]["plan_empty"] == 1 and s["doc"]["plan_aspects"] == [] for s in planned)
    # --limit 4 documents = 2 pairs; stage 1 planned the first 4 rows only.
    assert len(planned) == 4 and "Nothing specific" in sent_prompt(planned[0])


@pytest.mark.slow
def test_two_commands_work_with_lm_evals_own_backend(tmp_path: Path, server: FakeLLMServer) -> None:
    base = f"base_url={server.openai_base}/chat/completions,num_concurrent=4"
    stage1 = run_cli(["eval", "--model", "local-chat-completions", "--model_args", f"model=planner-gold,{base}",
                      "--apply_chat_template", "--tasks", "personalized_rb_plan", "--limit", "3",
                      "--metadata", '{"data_dir": "sample", "retriever": "embedding", "k": 10, "max_post_chars": 0}',
                      "--output_path", str(tmp_path / "plans"), "--log_samples"],
                     cwd=tmp_path, env=env(tmp_path))
    assert stage1.returncode == 0, stage1.stderr[-3000:]
    assert metric(read_results(tmp_path / "plans"), "personalized_rb_plan", "plan_recall") == 1.0

    stage2 = ["eval", "--model", "local-chat-completions", "--model_args", f"model=judge,{base}",
              "--apply_chat_template", "--tasks", "personalized_rb_planned", "--limit", "6",
              "--output_path", str(tmp_path / "judged"), "--log_samples", "--metadata"]
    missing = run_cli([*stage2, f'{{"data_dir": "sample", "plans": "{tmp_path / "plans"}"}}'],
                      cwd=tmp_path, env=env(tmp_path))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    line = last_line(missing.stderr)
    assert line.startswith("prb: no plan for row art/") and "'sample-art-004'" in line and "plans_missing=skip" in line

    judged = run_cli([*stage2, f'{{"data_dir": "sample", "plans": "{tmp_path / "plans"}", "plans_missing": "skip"}}'],
                     cwd=tmp_path, env=env(tmp_path))
    assert judged.returncode == 0, judged.stderr[-3000:]
    results = read_results(tmp_path / "judged")
    assert metric(results, "personalized_rb_planned", "acc") == 1.0
    assert len(read_samples(tmp_path / "judged", "personalized_rb_planned_lifestyle")) == 6


@pytest.mark.parametrize("case", ["other backend", "plans given", "user_template"])
def test_one_command_mistakes_are_one_line_errors(tmp_path: Path, server: FakeLLMServer, case: str) -> None:
    model, metadata = "prb-judge", '{"data_dir": "sample"}'
    if case == "other backend":
        model = "local-chat-completions"
    elif case == "plans given":
        metadata = '{"data_dir": "sample", "plans": "runs/plan"}'
    else:
        metadata = '{"data_dir": "sample", "user_template": "mine.jinja"}'
    proc = run_cli(["eval", "--model", model, "--model_args", judge_args(server, tmp_path / "cache", "planner-gold"),
                    "--tasks", "personalized_rb_planner", "--metadata", metadata],
                   cwd=tmp_path, env=env(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = last_line(proc.stderr)
    assert line.startswith("prb:") and "personalized_rb_planner" in line
    assert {"other backend": "--model prb-judge", "plans given": "personalized_rb_planned",
            "user_template": "templates=FOLDER"}[case] in line

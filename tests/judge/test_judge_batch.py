"""Batch mode and dry runs against the fake server's batch APIs, over real sockets.

End-to-end cases run ``python -m prb_tasks eval`` in subprocesses on
``personalized_rb_sample`` (both orders: 72 requests), like tests/e2e/test_judge_e2e.py;
recovery cases drive the real :class:`JudgeLM` in-process, where each step is quicker
to set up.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.judge.answer_cache import cache_info
from prb_tasks.judge.batch.ledger import Ledger
from prb_tasks.judge.errors import RunStopped
from prb_tasks.judge.model import JudgeLM
from prb_tasks.judge.usage import take_last_summary
from prb_tasks.replies.verdict import ERROR_MARK, parse_verdict
from prb_tasks.testing.fake_batches import BatchScript
from prb_tasks.testing.fake_server import FakeLLMServer, Message, prefer_texts
from tests.conftest import sample_rows
from tests.e2e.test_judge_e2e import ENV, KEY, TASK, N, assert_no_key, usage_of
from tests.judge.test_judge_model import expected, letters, requests_for
from tests.runner import metric, read_results, run_cli
from tests.watchdog import communicate_watched, run_watched, wait_for

METRICS = ("acc", "acc_macro", "acc_pair", "consistency", "pos_a_rate", "parse_fail", "error_rate", "skip_rate")
MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}
PROVIDERS = list(MODELS)


def mixed_policy() -> Any:
    """A judge that is right about 3 pairs in 4 and says A otherwise: deterministic per prompt."""
    rows = [r for s in SUBSETS for r in sample_rows(s.config)]
    right = prefer_texts([r["chosen"] for r in rows], [r["rejected"] for r in rows])

    def policy(messages: list[Message], model: str) -> str:
        prompt = messages[-1]["content"]
        if int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 4 == 0:
            return "Hard to say.\nResult: A"
        return right(messages, model)

    return policy


def base(srv: FakeLLMServer, provider: str) -> str:
    return srv.openai_base if provider == "openai" else srv.url


def model_args(srv: FakeLLMServer, provider: str, cache: Path, extra: str = "") -> str:
    args = (f"model={MODELS[provider]},api_base={base(srv, provider)},api_key_env=PRB_TEST_KEY,"
            f"cache_dir={cache},backoff_base=0.01,backoff_max=0.05")
    return args + ("," + extra if extra else "")


def eval_args(srv: FakeLLMServer, provider: str, cache: Path, out: Path, extra: str = "") -> list[str]:
    return ["eval", "--model", "prb-judge", "--model_args", model_args(srv, provider, cache, extra),
            "--tasks", TASK, "--output_path", str(out), "--log_samples"]


def run(tmp_path: Path, srv: FakeLLMServer, provider: str, cache: Path, out: Path, extra: str = "",
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    proc = run_cli(eval_args(srv, provider, cache, out, extra), cwd=tmp_path, env=ENV if env is None else env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return proc


def group_metrics(out: Path) -> dict[str, float]:
    results = read_results(out)
    return {name: metric(results, TASK, name) for name in METRICS}


def canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True)


# --------------------------------------------------------------------------- end to end


def start(tmp_path: Path, srv: FakeLLMServer, provider: str, cache: Path, out: Path,
          extra: str = "") -> subprocess.Popen:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_DATASETS_OFFLINE": "1", **ENV}
    return subprocess.Popen([sys.executable, "-m", "prb_tasks", *eval_args(srv, provider, cache, out, extra)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    stdout, stderr = communicate_watched(proc)
    assert proc.returncode == 0 and "Traceback" not in stderr, stderr[-3000:]
    return stdout, stderr


def cache_keys(cache: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(f"file:{cache / 'cache.db'}?mode=ro", uri=True)
    try:
        return {row[0] for row in conn.execute("SELECT key FROM Cache")}
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_run_matches_an_interactive_run(tmp_path: Path, provider: str) -> None:
    with FakeLLMServer(mixed_policy()) as srv:
        # Both at once: chat requests and batch requests are counted apart.
        live = start(tmp_path, srv, provider, tmp_path / "c-live", tmp_path / "live", "transport=litellm")
        batch = start(tmp_path, srv, provider, tmp_path / "c-batch", tmp_path / "batch", "batch=true,batch_poll=0.05")
        finish(live)
        stdout, stderr = finish(batch)
        stats = srv.stats()
        live_bodies = sorted(canonical(r["body"]) for r in srv.requests)
        batch_bodies = sorted(canonical(body) for _, _, body in srv.batches.bodies)
    metrics = group_metrics(tmp_path / "live")
    assert group_metrics(tmp_path / "batch") == metrics
    assert 0.5 < metrics["acc"] < 1.0  # a judge that is sometimes wrong, so equality means something
    # Every request went into the batch exactly as the interactive run sent it, once, and
    # its answer is stored under the key an interactive run uses (a later run sends nothing).
    assert len(live_bodies) == N and batch_bodies == live_bodies
    assert cache_keys(tmp_path / "c-batch") == cache_keys(tmp_path / "c-live")
    assert stats["total_requests"] == N and stats["batches"]["created"] == 1
    assert stats["batches"]["requests"] == N and stats["batches"]["duplicates"] == 0
    assert "submitted batch" in stderr and "batches: 1 submitted (72 requests), 72 answers" in stdout
    usage = usage_of(tmp_path / "batch")
    assert usage["batch"]["answers_collected"] == N and usage["cache_hits"] == N and usage["requests_sent"] == 0
    # Same tokens, half the price (both models list batch prices at 50%).
    live_cost = usage_of(tmp_path / "live")["cost"]["usd"]
    assert usage["batch"]["cost"]["usd"] == pytest.approx(live_cost / 2, rel=1e-3)
    assert_no_key(tmp_path)


@pytest.mark.slow
def test_killed_after_submission_the_same_command_collects(tmp_path: Path) -> None:
    provider = "openai"
    cache = tmp_path / "cache"
    with FakeLLMServer(mixed_policy(), record_requests=False) as srv:
        srv.batches.script(BatchScript(polls=10**9))  # runs until the test lets it finish
        proc = start(tmp_path, srv, provider, cache, tmp_path / "killed", "batch=true,batch_poll=0.05")
        # submitted, recorded, being waited for
        wait_for(lambda: srv.stats()["batches"].get("polls", 0) >= 3, proc, "3 polls of the batch")
        proc.send_signal(signal.SIGKILL)
        communicate_watched(proc)
        assert not list((tmp_path / "killed").rglob("results_*.json"))
        srv.batches.finish_all()
        run(tmp_path, srv, provider, cache, tmp_path / "resumed", "batch=true,batch_poll=0.05")
        stats = srv.stats()["batches"]
    assert stats["created"] == 1 and stats["requests"] == N and stats["duplicates"] == 0
    assert cache_info(cache).entries == N
    resumed = group_metrics(tmp_path / "resumed")
    assert resumed["error_rate"] == 0 and 0.5 < resumed["acc"] < 1.0
    assert usage_of(tmp_path / "resumed")["batch"]["batches_submitted"] == []
    assert_no_key(tmp_path)


@pytest.mark.slow
def test_batch_wait_false_submits_then_status_cancel_and_the_same_command_collects(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with FakeLLMServer(mixed_policy(), record_requests=False) as srv:
        srv.batches.script(BatchScript(polls=10**9, answered=30))
        extra = "batch=true,batch_wait=false,batch_max_requests=40"
        first = run(tmp_path, srv, "openai", cache, tmp_path / "out", extra)
        assert not list((tmp_path / "out").rglob("results_*.json"))
        ids = re.findall(r"batch_fake\d+", first.stdout)
        assert len(set(ids)) == 2 and "no results were written" in first.stdout
        assert f"prb eval --model prb-judge --model_args {model_args(srv, 'openai', cache, extra)}" in first.stdout
        assert "prb batch status --cache-dir" in first.stdout

        status = run_cli(["batch", "status", "--cache-dir", str(cache)], cwd=tmp_path, env=ENV)
        # The running batches were asked for their state (once each), not just read from the ledger.
        assert status.returncode == 0 and ids[0] in status.stdout and "validating" in status.stdout
        assert srv.stats()["batches"]["polls"] == 2
        cancel = run_cli(["batch", "cancel", ids[0], "--cache-dir", str(cache)], cwd=tmp_path, env=ENV)
        assert cancel.returncode == 0 and "cancel requested" in cancel.stdout
        missing = run_cli(["batch", "cancel", "batch_nope", "--cache-dir", str(cache)], cwd=tmp_path, env=ENV)
        assert missing.returncode == 2 and "no batch batch_nope" in missing.stderr and not missing.stdout
        srv.batches.finish_all()

        # The cancelled batch answered 30 of its 40; the next run collects those and both
        # batches' answers, resubmits the 10 it never ran, and (waiting) finishes.
        run(tmp_path, srv, "openai", cache, tmp_path / "out", "batch=true,batch_poll=0.05")
        submitted = srv.batches.submitted_ids()
    assert sum(submitted.values()) == N + 10 and sorted(Counter(submitted.values()).items()) == [(1, N - 10), (2, 10)]
    results = group_metrics(tmp_path / "out")
    assert results["error_rate"] == 0 and 0.5 < results["acc"] < 1.0
    final = run_cli(["batch", "status", "--cache-dir", str(cache)], cwd=tmp_path, env=ENV)
    assert "collected (cancelled)" in final.stdout and "collected (completed)" in final.stdout
    assert_no_key(tmp_path)


@pytest.mark.slow
def test_dry_run_sends_nothing_and_predicts_the_real_run(tmp_path: Path) -> None:
    import litellm

    def tiktoken_count(messages: list[Message], model: str) -> int:
        return int(litellm.token_counter(model=model, messages=messages))

    cache = tmp_path / "cache"
    no_key_env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PRB_TEST_KEY")}
    with FakeLLMServer(mixed_policy(), token_counter=tiktoken_count, record_requests=False) as srv:
        dry_args = f"model=openai/gpt-4o-mini,api_base={srv.openai_base},cache_dir={cache},dry_run=true"
        cmd = ["eval", "--model", "prb-judge", "--model_args", dry_args, "--tasks", TASK,
               "--output_path", str(tmp_path / "dry")]
        # No key is needed to estimate.
        dry = run_watched([sys.executable, "-m", "prb_tasks", *cmd], cwd=tmp_path, env=no_key_env,
                          capture_output=True, text=True, check=False)
        assert dry.returncode == 0 and "Traceback" not in dry.stderr, dry.stderr[-2000:]
        assert srv.stats()["http_requests"] == 0
        assert not list((tmp_path / "dry").rglob("results_*.json")) and not cache.exists()
        total = re.search(r"\| \*\*total\*\* \| ([\d,]+) \| ([\d,]+) \| "
                          r"([\d,]+) \| ([\d,]+) \| ([\d,]+) \|", dry.stdout)
        assert total, dry.stdout
        requests, cached, to_send, input_tokens, output_tokens = (int(g.replace(",", "")) for g in total.groups())
        assert (requests, cached, to_send, output_tokens) == (N, 0, N, N * 512)
        assert "o200k_base" in dry.stdout and "upper bound" in dry.stdout and "$ batch" in dry.stdout
        assert "dry run finished" in dry.stdout

        run(tmp_path, srv, "openai", cache, tmp_path / "real", "model=openai/gpt-4o-mini")
        sent = srv.stats()["total_requests"]
        usage = usage_of(tmp_path / "real")
        # The same request count, and the prompt tokens the server counted with the same tokenizer.
        assert sent == to_send and usage["tokens"]["input"] == input_tokens

        again = run_watched([sys.executable, "-m", "prb_tasks", *cmd], cwd=tmp_path, env=no_key_env,
                            capture_output=True, text=True, check=False)
        assert again.returncode == 0 and srv.stats()["total_requests"] == sent
    assert "| **total** | 72 | 72 | 0 | 0 | 0 | $0.0000 | $0.0000 |" in again.stdout
    # Output tokens of this judge with these prompts and settings are known now.
    assert f"expected from {N} stored answers" in again.stdout


# --------------------------------------------------------------------------- recovery, in-process


def sample_docs() -> list[dict[str, Any]]:
    return [d for s in SUBSETS for d in build_docs(s.config, "both", source="sample")]


DOCS = sample_docs()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


def judge(srv: FakeLLMServer, provider: str, cache: Path, **args: Any) -> JudgeLM:
    settings: dict[str, Any] = {"model": MODELS[provider], "api_base": base(srv, provider),
                                "api_key_env": "PRB_TEST_KEY", "cache_dir": str(cache), "batch": True,
                                "batch_poll": 0.02, "backoff_base": 0.01, "backoff_max": 0.05}
    settings.update(args)
    return JudgeLM(**settings)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_partial_failures_and_an_expired_batch_are_recovered_on_the_next_run(tmp_path: Path, provider: str) -> None:
    rows = [r for s in SUBSETS for r in sample_rows(s.config)]
    docs = DOCS[:24]
    with FakeLLMServer(prefer_texts([r["chosen"] for r in rows], [r["rejected"] for r in rows])) as srv:
        # First batch: request 0 fails transiently, request 3 is rejected for good,
        # request 5 gets an empty answer, and the batch expires after 16 requests.
        srv.batches.script(BatchScript(polls=1, end="expired", answered=16, errors={0: "500", 3: "400", 5: "empty"}))
        lm = judge(srv, provider, tmp_path)
        with pytest.raises(RunStopped, match="expired or was cancelled") as info:
            lm.generate_until(requests_for(lm, docs))
        assert "Run the same command again" in str(info.value)
        first = srv.batches.submitted_ids()
        # The retries of requests 0 and 5 went into a second batch in the same run; the 8
        # requests the expired batch never ran wait for the next run.
        assert srv.stats()["batches"]["created"] == 2 and sum(first.values()) == 24 + 2

        out = judge(srv, provider, tmp_path).generate_until(requests_for(lm, docs))
        submitted = srv.batches.submitted_ids()
        stats = srv.stats()
    assert stats["batches"]["created"] == 3 and sum(submitted.values()) == 24 + 2 + 8
    # Nothing answered was ever asked again; the rejected request was never retried.
    assert sorted(Counter(submitted.values()).items()) == [(1, 24 - 10), (2, 10)]
    assert stats["total_requests"] == 0
    assert out[3].startswith(f"{ERROR_MARK} BadRequestError") and KEY not in out[3]
    assert letters(out[:3] + out[4:]) == expected(docs[:3] + docs[4:])
    summary = take_last_summary()
    assert summary["errors"] == 1 and summary["cache_hits"] == 23 and summary["requests_sent"] == 0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_lost_creation_reply_does_not_submit_twice(tmp_path: Path, provider: str) -> None:
    rows = [r for s in SUBSETS for r in sample_rows(s.config)]
    docs = DOCS[:6]
    with FakeLLMServer(prefer_texts([r["chosen"] for r in rows], [r["rejected"] for r in rows])) as srv:
        srv.batches.script(BatchScript(polls=1, lose_create_reply=True))
        lm = judge(srv, provider, tmp_path, timeout=5)
        out = lm.generate_until(requests_for(lm, docs))
        stats = srv.stats()["batches"]
    assert stats["lost_replies"] == 1 and stats["created"] == 1 and stats["duplicates"] == 0
    assert letters(out) == expected(docs)
    ledger = Ledger(tmp_path)
    assert [j.state for j in ledger.jobs()] == ["collected"]


def test_retries_are_bounded_then_error_outcomes(tmp_path: Path) -> None:
    docs = DOCS[:4]
    with FakeLLMServer() as srv:
        always_500 = {0: "500"}
        srv.batches.script(*[BatchScript(polls=0, errors=always_500) for _ in range(3)])
        lm = judge(srv, "openai", tmp_path, batch_retries=2)
        out = lm.generate_until(requests_for(lm, docs))
        submitted = srv.batches.submitted_ids()
    # First try plus two retries, each in its own later batch; then an error outcome.
    assert sorted(submitted.values()) == [1, 1, 1, 3]
    assert out[0].startswith(f"{ERROR_MARK} InternalServerError") and parse_verdict(out[0]).outcome == "error"
    assert take_last_summary()["errors_by_kind"] == {"server": 1}


def test_provider_errors_stop_with_one_line(tmp_path: Path) -> None:
    with FakeLLMServer() as srv:
        srv.batches.push_http_faults(["401"])
        lm = judge(srv, "anthropic", tmp_path)
        with pytest.raises(Exception) as info:
            lm.generate_until(requests_for(lm, DOCS[:2]))
    message = str(info.value)
    assert message.startswith("prb-judge: anthropic") and "rejected the API key" in message
    assert "\n" not in message and KEY not in message
    # Nothing reached the provider, so nothing stays pending.
    assert [j.state for j in Ledger(tmp_path).jobs()] == ["abandoned"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_later_process_resumes_running_batches_from_the_ledger(tmp_path: Path, provider: str) -> None:
    rows = [r for s in SUBSETS for r in sample_rows(s.config)]
    docs = DOCS[:10]
    with FakeLLMServer(prefer_texts([r["chosen"] for r in rows], [r["rejected"] for r in rows])) as srv:
        srv.batches.script(BatchScript(polls=10**9))
        lm = judge(srv, provider, tmp_path, batch_wait=False, batch_max_requests=4)
        with pytest.raises(RunStopped, match="not answered yet") as info:
            lm.generate_until(requests_for(lm, docs))
        assert str(info.value).count("fake") >= 3 \
            and "Collect them by running the same command again" in str(info.value)
        # Another judge object (as a new process would) while they still run: nothing new.
        with pytest.raises(RunStopped, match="not answered yet"):
            judge(srv, provider, tmp_path, batch_wait=False).generate_until(requests_for(lm, docs))
        assert srv.stats()["batches"]["created"] == 3
        srv.batches.finish_all()
        out = judge(srv, provider, tmp_path).generate_until(requests_for(lm, docs))
        stats = srv.stats()["batches"]
    assert stats["created"] == 3 and stats["requests"] == 10 and stats["duplicates"] == 0
    assert letters(out) == expected(docs)


def test_a_batch_rejected_as_a_whole_stops_with_the_reason_and_frees_its_requests(tmp_path: Path) -> None:
    with FakeLLMServer() as srv:
        srv.batches.script(BatchScript(polls=0, end="failed"))
        lm = judge(srv, "openai", tmp_path)
        with pytest.raises(Exception, match="rejected batch .* as a whole") as info:
            lm.generate_until(requests_for(lm, DOCS[:3]))
        assert "scripted failure" in str(info.value) and "\n" not in str(info.value)
        # Nothing ran, so the next run submits the same requests again (and now succeeds).
        out = judge(srv, "openai", tmp_path).generate_until(requests_for(lm, DOCS[:3]))
        assert sorted(srv.batches.submitted_ids().values()) == [2, 2, 2]
    assert all(parse_verdict(o).letter == "A" for o in out)


def test_a_batch_the_provider_no_longer_knows_is_released_and_resubmitted(tmp_path: Path) -> None:
    docs = DOCS[:3]
    with FakeLLMServer() as srv:
        srv.batches.script(BatchScript(polls=10**9))
        lm = judge(srv, "anthropic", tmp_path, batch_wait=False)
        with pytest.raises(RunStopped):
            lm.generate_until(requests_for(lm, docs))
        ledger = Ledger(tmp_path)
        (job,) = ledger.jobs()
        job.batch_id = "msgbatch_deleted"  # as if deleted at the provider
        ledger.save(job)
        srv.batches.script(BatchScript(polls=0))
        out = judge(srv, "anthropic", tmp_path).generate_until(requests_for(lm, docs))
        assert letters(out) == ["A", "A", "A"] and srv.stats()["batches"]["created"] == 2
    assert [j.state for j in Ledger(tmp_path).jobs()] == ["abandoned", "collected"]

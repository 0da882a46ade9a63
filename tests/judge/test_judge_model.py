"""prb-judge in-process: the real JudgeLM, real litellm (or the direct client) and real
sockets against the fake server, with its fault injection."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.judge.errors import JudgeConfigError, JudgeFatalError
from prb_tasks.judge.model import JudgeLM
from prb_tasks.judge.options import DEFAULT_REASK_PROMPT
from prb_tasks.judge.request import cache_key, request_digest
from prb_tasks.judge.usage import take_last_summary
from prb_tasks.replies.verdict import ERROR_MARK, SKIPPED_MARK, parse_verdict
from prb_tasks.testing.fake_server import FakeLLMServer, Message, always, prefer_texts
from tests.conftest import sample_rows

KEY = "sk-prb-judge-test-KEY-77f3a91c"
GEN = {"until": [], "max_gen_toks": 512, "temperature": 0.0, "do_sample": False}
TRANSPORTS = ["litellm", "direct"]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


def sample_docs() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for subset in ("Art_and_Entertainment", "Lifestyle_and_Personal_Development", "Society_and_Culture"):
        docs.extend(build_docs(subset, "both", source="sample"))
    return docs


DOCS = sample_docs()


def chosen_policy() -> Any:
    """Fake judge that always prefers the chosen response (so the right answer is known)."""
    rows = [r for s in SUBSETS for r in sample_rows(s.config)]
    return prefer_texts([r["chosen"] for r in rows], [r["rejected"] for r in rows])


def judge(server: FakeLLMServer, cache_dir: Path, transport: str = "litellm", **args: Any) -> JudgeLM:
    settings: dict[str, Any] = {
        "model": "openai/fake",
        "api_base": server.openai_base,
        "api_key_env": "PRB_TEST_KEY",
        "cache_dir": str(cache_dir),
        "transport": transport,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "num_concurrent": 8,
    }
    settings.update(args)
    return JudgeLM(**settings)


def requests_for(lm: JudgeLM, docs: list[dict[str, Any]], gen: dict[str, Any] = GEN) -> list[Instance]:
    out = []
    for i, doc in enumerate(docs):
        context = lm.apply_chat_template([
            {"role": "system", "content": doc["system_prompt"]},
            {"role": "user", "content": doc["prompt"]},
        ])
        out.append(Instance("generate_until", doc, (context, dict(gen)), i))
    return out


def letters(outputs: list[str]) -> list[str | None]:
    return [parse_verdict(o).letter for o in outputs]


def expected(docs: list[dict[str, Any]]) -> list[str]:
    return [d["chosen_position"] for d in docs]


# --------------------------------------------------------------------------- failures


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_transient_failures_are_retried_within_the_bound(tmp_path: Path, transport: str) -> None:
    faults = {"429": 0.10, "500": 0.08, "503": 0.05, "drop": 0.04, "malformed": 0.03}  # 30%
    max_retries = 8
    with FakeLLMServer(chosen_policy(), faults=faults, seed=3, retry_after=0.01) as srv:
        lm = judge(srv, tmp_path, transport, max_retries=max_retries, cache="off")
        out = lm.generate_until(requests_for(lm, DOCS))
        stats = srv.stats()
    assert letters(out) == expected(DOCS)  # every judgment answered, in request order
    assert sum(stats["faults"].values()) > 10
    assert stats["total_requests"] == stats["successes"] + sum(stats["faults"].values())
    assert stats["successes"] == len(DOCS)
    assert stats["total_requests"] <= len(DOCS) * (max_retries + 1)
    summary = take_last_summary()
    assert summary is not None
    assert summary["retries"] == stats["total_requests"] - len(DOCS)
    assert summary["errors"] == 0 and summary["requests_ok"] == len(DOCS)
    assert sum(summary["failed_attempts_by_kind"].values()) == sum(stats["faults"].values())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_hung_request_times_out_and_is_retried(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer(always("B"), fault_script=["timeout"], hang_seconds=600) as srv:
        lm = judge(srv, tmp_path, transport, timeout=0.5, num_concurrent=1)
        started = time.monotonic()
        out = lm.generate_until(requests_for(lm, DOCS[:1]))
        # the hang lasts 600 s (closing the server ends it): the 0.5 s timeout ended it
        assert time.monotonic() - started < 300
        assert srv.stats()["total_requests"] == 2
    assert letters(out) == ["B"]
    assert take_last_summary()["failed_attempts_by_kind"] == {"timeout": 1}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_permanently_failing_request_becomes_an_error_outcome(tmp_path: Path, transport: str) -> None:
    poisoned = DOCS[5]["prompt"]
    policy = chosen_policy()

    def flaky(messages: list[Message], model: str) -> str:
        if messages[-1]["content"] == poisoned:
            raise RuntimeError("this prompt always breaks the server")
        return policy(messages, model)

    with FakeLLMServer(flaky) as srv:
        lm = judge(srv, tmp_path, transport, max_retries=3)
        out = lm.generate_until(requests_for(lm, DOCS[:12]))
        stats = srv.stats()
    assert out[5].startswith(f"{ERROR_MARK} InternalServerError:")
    assert "\n" not in out[5] and KEY not in out[5]
    assert parse_verdict(out[5]).outcome == "error"
    assert letters(out[:5] + out[6:]) == expected(DOCS[:5] + DOCS[6:12])
    assert stats["policy_errors"] == 4  # first attempt + max_retries
    summary = take_last_summary()
    assert summary["errors"] == 1 and summary["errors_by_kind"] == {"server": 1}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("fault, words", [("401", "rejected the API key"), ("404", "was not found"),
                                          ("400", "rejected the request")])
def test_run_wide_errors_stop_at_once(tmp_path: Path, transport: str, fault: str, words: str) -> None:
    with FakeLLMServer(always("A"), faults={fault: 1.0}) as srv:
        lm = judge(srv, tmp_path, transport, num_concurrent=4)
        with pytest.raises(JudgeFatalError, match=words) as info:
            lm.generate_until(requests_for(lm, DOCS))
        sent = srv.stats()["total_requests"]
    assert sent <= 4  # stopped after the first round, not 72 calls
    message = str(info.value)
    assert "\n" not in message and KEY not in message and message.startswith("prb-judge:")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_retry_after_is_honoured(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer(always("A"), fault_script=["429"], retry_after=0.6) as srv:
        lm = judge(srv, tmp_path, transport, backoff_base=0.001, num_concurrent=1)
        started = time.monotonic()
        out = lm.generate_until(requests_for(lm, DOCS[:1]))
        assert time.monotonic() - started >= 0.6
        assert srv.stats()["total_requests"] == 2
    assert letters(out) == ["A"]


def test_rate_limits_shrink_concurrency(tmp_path: Path) -> None:
    with FakeLLMServer(always("A"), faults={"429": 0.4}, seed=1, retry_after=0.01, latency=0.02) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=16, max_retries=20)
        out = lm.generate_until(requests_for(lm, DOCS))
    assert letters(out) == ["A"] * len(DOCS)
    summary = take_last_summary()
    assert summary["lowest_concurrency"] < 16


# --------------------------------------------------------------------------- cache behaviour


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_answers_are_cached_but_empty_and_refused_ones_are_not(tmp_path: Path, transport: str, capsys: Any) -> None:
    with FakeLLMServer(always("A")) as srv:
        lm = judge(srv, tmp_path, transport, num_concurrent=1)
        # An empty reply is asked once more at once; two in a row stay empty (unparsed).
        srv.push_faults(["empty", "empty"])
        assert lm.generate_until(requests_for(lm, DOCS[:1])) == [""]
        summary = take_last_summary()
        assert summary["empty_completions"] == 1 and summary["empty_retries"] == 1
        assert "1 empty replies were asked again once; 1 stayed empty" in capsys.readouterr().out
        srv.push_faults(["refusal"])
        assert "can't help" in lm.generate_until(requests_for(lm, DOCS[1:2]))[0]
        assert take_last_summary()["refused_completions"] == 1
        srv.push_faults(["empty"])
        assert letters(lm.generate_until(requests_for(lm, DOCS[2:3]))) == ["A"]
        summary = take_last_summary()
        assert summary["empty_retries"] == 1 and summary["empty_completions"] == 0 and summary["answers_stored"] == 1
        assert srv.stats()["total_requests"] == 5
        srv.reset()
        second = judge(srv, tmp_path, transport).generate_until(requests_for(lm, DOCS[:3]))
        assert srv.stats()["total_requests"] == 2  # only the empty and the refused one again
    assert letters(second) == ["A", "A", "A"]
    assert take_last_summary()["cache_hits"] == 1


def test_planted_pickle_under_a_real_key_is_refused(tmp_path: Path) -> None:
    import diskcache

    marker = tmp_path / "executed"

    class Exploit:
        def __reduce__(self):
            return (Path.write_text, (marker, "pwned"))

    with FakeLLMServer(always("B")) as srv:
        lm = judge(srv, tmp_path / "cache", "direct")
        reqs = requests_for(lm, DOCS[:1])
        request = lm.to_request(*reqs[0].args)
        key = cache_key(request_digest(request, "openai/fake", srv.openai_base), 0)
        stock = diskcache.Cache(str(tmp_path / "cache"))
        stock.set(key, Exploit())
        stock.close()
        out = lm.generate_until(reqs)
        assert srv.stats()["total_requests"] == 1
    assert not marker.exists()
    assert letters(out) == ["B"]
    assert take_last_summary()["cache_entries_refused"] == 1


# --------------------------------------------------------------------------- features


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reask_asks_for_the_verdict_once_and_is_cached(tmp_path: Path, transport: str) -> None:
    def policy(messages: list[Message], model: str) -> str:
        if messages[-1]["content"] == DEFAULT_REASK_PROMPT:
            assert messages[-2] == {"role": "assistant", "content": "Both are lovely."}
            return "Result: B"
        return "Both are lovely."

    with FakeLLMServer(policy) as srv:
        lm = judge(srv, tmp_path, transport, reask=True)
        out = lm.generate_until(requests_for(lm, DOCS[:4]))
        assert srv.stats()["total_requests"] == 8
        summary = take_last_summary()
        assert summary["reasks"] == 4 and summary["requests_sent"] == 8
        assert out[0] == "Both are lovely.\n\n[re-ask] Result: B"
        assert letters(out) == ["B"] * 4
        srv.reset()
        again = judge(srv, tmp_path, transport, reask=True).generate_until(requests_for(lm, DOCS[:4]))
        assert srv.stats()["total_requests"] == 0 and again == out


def test_other_providers_through_litellm(tmp_path: Path) -> None:
    with FakeLLMServer(chosen_policy()) as srv:
        for model in ("anthropic/claude-x", "ollama_chat/qwen"):
            lm = judge(srv, tmp_path, "litellm", model=model, api_base=srv.url)
            out = lm.generate_until(requests_for(lm, DOCS[:6]))
            assert letters(out) == expected(DOCS[:6]), model
            summary = take_last_summary()
            assert summary["tokens"]["input"] > 0 and summary["tokens"]["output"] > 0
        assert srv.stats()["by_api"] == {"anthropic": 6, "ollama": 6}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reasoning_config_settings_reach_the_api(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer(always("A")) as srv:
        lm = judge(srv, tmp_path, transport, config="o4-mini", model="openai/fake")
        lm.generate_until(requests_for(lm, DOCS[:1]))
        body = srv.requests[0]["body"]
    assert "temperature" not in body
    assert body["max_tokens"] == 4096
    assert body["reasoning_effort"] == "medium"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_generation_settings_and_plain_prompts(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer(always("A")) as srv:
        lm = judge(srv, tmp_path, transport)
        gen = {"until": ["\n\n", "###"], "max_gen_toks": 64, "temperature": 0.7, "top_p": 0.5, "do_sample": True}
        lm.generate_until([Instance("generate_until", {}, ("Which is better, A or B?", gen), 0)])
        body = srv.requests[0]["body"]
    assert body["messages"] == [{"role": "user", "content": "Which is better, A or B?"}]
    assert body["stop"] == ["\n\n", "###"] and body["max_tokens"] == 64
    assert body["temperature"] == 0.7 and body["top_p"] == 0.5
    assert "do_sample" not in body
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_chat_messages_go_out_as_turns(tmp_path: Path) -> None:
    with FakeLLMServer(always("A")) as srv:
        lm = judge(srv, tmp_path, "litellm")
        lm.generate_until(requests_for(lm, DOCS[:1]))
        body = srv.requests[0]["body"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == DOCS[0]["prompt"]
    assert "stop" not in body and body["temperature"] == 0.0 and body["max_tokens"] == 512


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_max_cost_stops_spending_and_skips_the_rest(tmp_path: Path, transport: str) -> None:
    # The fake server counts words as tokens: ~300-token prompts at $1,000/Mtok ~= $0.3 a call.
    with FakeLLMServer(always("A"), latency=0.02) as srv:
        lm = judge(srv, tmp_path, transport, num_concurrent=2, max_cost=2.0,
                   input_cost_per_mtok=1000, output_cost_per_mtok=1000)
        out = lm.generate_until(requests_for(lm, DOCS))
        sent = srv.stats()["total_requests"]
    summary = take_last_summary()
    skipped = [o for o in out if o.startswith(SKIPPED_MARK)]
    assert 3 <= sent < 20 and len(skipped) == len(DOCS) - sent
    assert summary["cost"]["usd"] < 2.0 + 2 * 0.5
    assert summary["skipped"] == len(skipped) and "max_cost" in summary["budget_stop"]
    assert all(parse_verdict(o).outcome == "skipped" for o in skipped)


def test_max_cost_needs_a_price(tmp_path: Path) -> None:
    # Checked when the first request is about to be sent (a cached run needs no price),
    # before anything goes out.
    with FakeLLMServer() as srv:
        lm = judge(srv, tmp_path, "direct", max_cost=1.0)
        with pytest.raises(JudgeConfigError, match="input_cost_per_mtok"):
            lm.generate_until(requests_for(lm, DOCS[:3]))
        assert srv.stats()["total_requests"] == 0


def test_loglikelihood_points_to_the_scalar_tasks(tmp_path: Path) -> None:
    with FakeLLMServer() as srv:
        lm = judge(srv, tmp_path, "direct")
    with pytest.raises(JudgeConfigError, match="prb-rm"):
        lm.loglikelihood([])


def test_missing_provider_key_is_reported_before_any_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with FakeLLMServer(always("B")) as srv:
        args = {"model": "anthropic/fake", "api_base": srv.url, "cache_dir": str(tmp_path), "backoff_base": 0.01}
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-0123456789")
        lm = JudgeLM(**args)
        assert letters(lm.generate_until(requests_for(lm, DOCS[:2]))) == ["B", "B"]
        # Without the key the judge stops when it is made, before lm-eval loads any data
        # (issue 32: not ~40 s later at the first request), even if every answer is cached ...
        monkeypatch.delenv("ANTHROPIC_API_KEY")
        with pytest.raises(JudgeConfigError, match="needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"):
            JudgeLM(**args)
        # ... a fully cached re-run works with the variable set to anything: nothing is sent.
        srv.reset()
        monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
        lm = JudgeLM(**args)
        assert letters(lm.generate_until(requests_for(lm, DOCS[:2]))) == ["B", "B"]
        assert srv.stats()["total_requests"] == 0


def test_summary_is_json_and_free_of_the_key(tmp_path: Path) -> None:
    with FakeLLMServer(always("A")) as srv:
        lm = judge(srv, tmp_path, "litellm", input_cost_per_mtok=0.15, output_cost_per_mtok=0.6)
        lm.generate_until(requests_for(lm, DOCS[:4]))
        judge(srv, tmp_path, "litellm").generate_until(requests_for(lm, DOCS[:4]))
    summary = take_last_summary()
    assert KEY not in json.dumps(summary)
    assert summary["cache_hits"] == 4 and summary["cost"]["usd"] == 0
    assert summary["cost_of_cache_hits_when_made"]["usd"] > 0

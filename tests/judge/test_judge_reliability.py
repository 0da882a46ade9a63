"""prb-judge under hostile and failing servers, in-process: keys echoed back, a server
that dies mid-run, daily quotas, slow one-at-a-time servers, budgets, replies without
verdicts, and claims shared between runs on one cache (real sockets, fake server)."""

from __future__ import annotations

import math
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.common.redact import PROVIDER_KEY_VARS, is_secret_name, redact
from prb_tasks.judge.answer_cache import cache_info
from prb_tasks.judge.claims import ClaimBoard
from prb_tasks.judge.errors import JudgeConfigError, JudgeFatalError
from prb_tasks.judge.limiter import AdaptiveLimiter, Permit
from prb_tasks.judge.model import JudgeLM
from prb_tasks.judge.usage import UsageTracker, take_last_summary
from prb_tasks.replies.verdict import SKIPPED_MARK
from prb_tasks.rm.errors import ServedRMError
from prb_tasks.rm.scorers.served import ServedScorer
from prb_tasks.testing.fake_server import FakeLLMServer, always, garbage, scripted
from tests.judge.test_judge_model import DOCS, chosen_policy, expected, judge, letters, requests_for

KEY = "sk-prb-judge-test-KEY-77f3a91c"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


# --------------------------------------------------------------------------- keys


def canaries() -> dict[str, str]:
    """A distinct fake key in every provider key variable we know, plus ours."""
    names = {n for group in PROVIDER_KEY_VARS.values() for n in group} | {"PRB_RM_API_KEY", "MY_JUDGE_TOKEN"}
    return {name: f"canary-{name.lower().replace('_', '-')}-5e1f0c9a" for name in sorted(names)}


@pytest.fixture
def canary_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = canaries()
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def leaked(values: dict[str, str], *texts: str) -> list[str]:
    return [name for name, value in values.items() for text in texts if value in text]


def folder_text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


def test_every_credential_variable_litellm_reads_is_redacted() -> None:
    """Names litellm's own source reads with get_secret/os.environ that look like
    credentials are all recognised (the rest name hosts, files, limits, ...)."""
    import litellm

    root = Path(litellm.__file__).parent
    read = re.compile(r"(?:get_secret(?:_str|_bool)?|os\.environ\.get|os\.getenv|os\.environ\[)\(?\s*"
                      r"(?:secret_name\s*=\s*)?[\"']([A-Z][A-Z0-9_]+)[\"']")
    names: set[str] = set()
    for path in root.rglob("*.py"):
        names.update(m.group(1) for m in read.finditer(path.read_text(encoding="utf-8", errors="replace")))
    assert len(names) > 300  # the scan really read litellm
    looks_secret = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH")
    settings = re.compile(r"_(HOST|PORT|URL|ENDPOINT|FILE|DIR|TOKENS|REASONING|TRITON|SECONDS|NAME|ID|KEYS|"
                          r"SECRETS|RUNS|BASE)$")
    missed = sorted(n for n in names if looks_secret.search(n) and not is_secret_name(n) and not settings.search(n))
    assert missed == []
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN",
                 "WATSONX_ZENAPIKEY", "AZURE_AD_TOKEN", "PRB_RM_API_KEY", "MY_API_KEY"):
        assert is_secret_name(name), name
    assert not is_secret_name("HOME") and not is_secret_name("DEFAULT_MAX_TOKENS")


def test_redact_hides_values_not_names(canary_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = " | ".join(f"{name}={value}" for name, value in canary_env.items())
    cleaned = redact(text + " ?key=" + canary_env["GEMINI_API_KEY"].replace("-", "%2D"))
    assert leaked(canary_env, cleaned) == [] and "OPENAI_API_KEY=***" in cleaned
    monkeypatch.setenv("SHORT_TOKEN", "true")  # too short to be a key: left alone
    assert redact("it is true") == "it is true"


@pytest.mark.parametrize("transport", ["litellm", "direct"])
def test_keys_litellm_reads_itself_are_redacted_from_outcomes_cache_and_summary(
    tmp_path: Path, transport: str, canary_env: dict[str, str], capsys: Any
) -> None:
    # No api_key_env: the OpenAI key comes from OPENAI_API_KEY. The server echoes it
    # in every error body and every reply; half the requests fail for good.
    with FakeLLMServer(always("A"), echo_credentials=True, faults={"500": 0.5}, seed=4) as srv:
        lm = JudgeLM(model="openai/fake", api_base=srv.openai_base, cache_dir=str(tmp_path), transport=transport,
                     max_retries=0, backoff_base=0.01, num_concurrent=4)
        out = lm.generate_until(requests_for(lm, DOCS[:24]))
        echoed = [r["headers"].get("authorization", "") for r in srv.requests]
    assert all(canary_env["OPENAI_API_KEY"] in e for e in echoed)  # the key really went out (and came back)
    errors = [o for o in out if o.startswith("[prb:error]")]
    answers = [o for o in out if not o.startswith("[prb:error]")]
    assert errors and answers and all("***" in o for o in out)
    summary = take_last_summary()
    captured = capsys.readouterr()
    assert leaked(canary_env, *out, str(summary), captured.out, captured.err, folder_text(tmp_path)) == []


def test_anthropic_key_read_by_litellm_is_redacted(tmp_path: Path, canary_env: dict[str, str]) -> None:
    with FakeLLMServer(always("B"), echo_credentials=True, fault_script=["500"]) as srv:
        lm = JudgeLM(model="anthropic/fake", api_base=srv.url, cache_dir=str(tmp_path), max_retries=0)
        out = lm.generate_until(requests_for(lm, DOCS[:3]))
        assert srv.requests[0]["headers"]["x-api-key"] == canary_env["ANTHROPIC_API_KEY"]
    # (litellm masks this error body itself; the replies echo the key and rely on us.)
    errors = [o for o in out if o.startswith("[prb:error]")]
    replies = [o for o in out if not o.startswith("[prb:error]")]
    assert len(errors) == 1 and "request credentials" in errors[0]
    assert letters(replies) == ["B", "B"] and all("x-api-key: ***" in o for o in replies)
    assert leaked(canary_env, *out, folder_text(tmp_path), str(take_last_summary())) == []


def test_gemini_key_in_a_fatal_404_is_redacted_and_the_message_names_model_or_url(
    tmp_path: Path, canary_env: dict[str, str]
) -> None:
    with FakeLLMServer(echo_credentials=True) as srv:
        lm = JudgeLM(model="gemini/fake", api_base=srv.url, cache_dir=str(tmp_path))
        with pytest.raises(JudgeFatalError) as info:
            lm.generate_until(requests_for(lm, DOCS[:2]))
    message = str(info.value)
    # The server got the key and sent it back (litellm masks this header itself).
    assert "request credentials:" in message and "request credentials: none" not in message
    assert leaked(canary_env, message) == []
    assert "or its URL was not found" in message and "temperature" not in message


def test_rm_server_echoing_its_bearer_token_is_redacted(canary_env: dict[str, str]) -> None:
    from prb_tasks.rm.inputs import RMInput

    with FakeLLMServer(echo_credentials=True) as srv:
        scorer = ServedScorer(srv.url, max_retries=0)
        with pytest.raises(ServedRMError) as info:
            scorer.score([RMInput(prompt="q", response="r")])
    assert "Bearer ***" in str(info.value) and leaked(canary_env, str(info.value)) == []


# --------------------------------------------------------------------------- dying server, quota, waits


@pytest.mark.parametrize("transport", ["litellm", "direct"])
def test_a_server_that_dies_mid_run_stops_the_run_and_a_rerun_resumes(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer(chosen_policy(), die_after=20, latency=0.01) as srv:
        port = srv.port
        lm = judge(srv, tmp_path, transport, num_concurrent=4, max_retries=6)
        started = time.monotonic()
        out = lm.generate_until(requests_for(lm, DOCS))
        elapsed = time.monotonic() - started
    summary = take_last_summary()
    answered = [o for o in out if not o.startswith(("[prb:error]", SKIPPED_MARK))]
    skipped = [o for o in out if o == f"{SKIPPED_MARK} endpoint unreachable"]
    # Those in flight when it died may still have been answered.
    assert 20 <= len(answered) <= 24 and len(answered) + len(skipped) + summary["errors"] == len(DOCS)
    assert len(skipped) >= len(DOCS) - 20 - 4  # at most the judgments in flight end otherwise
    assert "stopped answering" in summary["stopped"] and "connection attempts in a row" in summary["stopped"]
    # Without the stop, 52 judgments x 7 attempts would be sent; now a few rounds of back-offs.
    assert sum(summary["failed_attempts_by_kind"].values()) <= 40
    assert elapsed < 60
    # Same server back on the same port: the re-run sends only what was not answered.
    with FakeLLMServer(chosen_policy(), port=port) as again:
        lm = judge(again, tmp_path, transport, num_concurrent=4)
        resumed = lm.generate_until(requests_for(lm, DOCS))
        assert again.stats()["total_requests"] == len(DOCS) - len(answered)
    assert letters(resumed) == expected(DOCS)


@pytest.mark.parametrize("transport", ["litellm", "direct"])
def test_a_server_never_reached_stops_with_one_line(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer() as srv:
        base = srv.openai_base
    lm = JudgeLM(model="openai/fake", api_base=base, cache_dir=str(tmp_path), transport=transport,
                 backoff_base=0.01, num_concurrent=4)
    with pytest.raises(JudgeFatalError, match="could not connect to openai/fake at .*check that the server is running"):
        lm.generate_until(requests_for(lm, DOCS[:30]))


@pytest.mark.parametrize("fault, words", [("429", "asks to wait 2.0 h"), ("quota", "quota is used up")])
def test_a_spent_quota_stops_the_run_at_once(tmp_path: Path, fault: str, words: str, capsys: Any) -> None:
    with FakeLLMServer(always("A"), faults={fault: 1.0}, retry_after=7200) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=2)
        started = time.monotonic()
        out = lm.generate_until(requests_for(lm, DOCS[:20]))
        assert time.monotonic() - started < 10
        assert srv.stats()["total_requests"] <= 2
    summary = take_last_summary()
    assert all(o == f"{SKIPPED_MARK} provider quota exhausted" for o in out)
    assert words in summary["stopped"] and "RateLimitError" in summary["stopped"]
    err = capsys.readouterr().err
    assert words in err and "no new requests are sent" in err


def test_one_judgment_waits_at_most_max_wait(tmp_path: Path) -> None:
    with FakeLLMServer(always("A"), fault_script=["429"] * 10, retry_after=0.3) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=1, max_retries=10, max_wait=0.5)
        started = time.monotonic()
        out = lm.generate_until(requests_for(lm, DOCS[:1]))
        assert time.monotonic() - started < 10  # all ten waits with their back-offs would be longer
        assert srv.stats()["total_requests"] == 2  # asked to wait 0.3 s twice: 0.6 > 0.5
    assert out[0].startswith("[prb:error] RateLimitError") and "max_wait=0.5" in out[0]


def test_repeated_timeouts_lower_concurrency_and_show_in_the_bar(tmp_path: Path, capsys: Any) -> None:
    # One request at a time, 0.25 s each: with 4 in flight the queued ones time out.
    with FakeLLMServer(always("B"), latency=0.25, max_parallel=1) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=4, timeout=0.6, max_retries=8)
        out = lm.generate_until(requests_for(lm, DOCS[:12]))
    summary = take_last_summary()
    assert letters(out) == ["B"] * 12
    assert summary["failed_attempts_by_kind"]["timeout"] >= 2 and summary["lowest_concurrency"] <= 2
    err = capsys.readouterr().err
    assert "timeouts=" in err and "Raise timeout= (e.g. timeout=600)" in err


def test_limiter_halves_once_per_round_of_timeouts() -> None:
    now = [0.0]
    limiter = AdaptiveLimiter(8, clock=lambda: now[0])
    early = [Permit(0, granted=-1.0) for _ in range(6)]
    limiter.on_timeout(early[0])
    assert limiter.slots == 8  # one timeout is not a pattern
    limiter.on_timeout(early[1])
    assert limiter.slots == 4
    now[0] = 1.0
    for permit in early[2:]:  # sent before the decrease: no further halving
        limiter.on_timeout(permit)
    assert limiter.slots == 4
    limiter.on_timeout(Permit(0, granted=2.0))
    limiter.on_timeout(Permit(0, granted=2.0))
    assert limiter.slots == 2 and limiter.timeouts == 8
    for _ in range(50):  # once replies come back, successes grow it back to num_concurrent
        limiter.on_success()
    assert limiter.slots == 8


def test_progress_postfix_counts_timeouts() -> None:
    usage = UsageTracker(model="m", transport="direct")
    assert "timeouts" not in usage.postfix(4)
    usage.failed_attempt("timeout")
    assert "timeouts=1" in usage.postfix(4)


# --------------------------------------------------------------------------- budget, verdicts, settings


def test_max_cost_is_overshot_by_at_most_the_requests_in_flight(tmp_path: Path) -> None:
    # Replies of very different lengths make the per-request estimate wrong on purpose.
    long_reply = "word " * 400 + "\nResult: A"
    replies = ["Result: A", "Result: A", long_reply, "Result: B", long_reply, "Result: A"]
    conc, limit = 4, 2.0
    with FakeLLMServer(scripted(replies), latency=0.05) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=conc, max_cost=limit,
                   input_cost_per_mtok=1000, output_cost_per_mtok=1000)
        out = lm.generate_until(requests_for(lm, DOCS))
        bodies = [r["body"] for r in srv.requests]
    summary = take_last_summary()
    # The fake server counts words as tokens; each call's true cost:
    costs = [(sum(len(m["content"].split()) for m in b["messages"]) + 401) / 1000 for b in bodies]
    assert 2 <= len(bodies) < len(DOCS)
    assert summary["cost"]["usd"] <= limit + conc * max(costs)
    assert summary["skipped"] == len(DOCS) - len(bodies) == sum(o.startswith(SKIPPED_MARK) for o in out)
    assert f"${summary['cost']['usd']:.4f} spent in all" in summary["budget_stop"]


@pytest.mark.parametrize("reask", [False, True])
def test_a_run_without_any_verdict_ends_with_a_warning(tmp_path: Path, reask: bool, capsys: Any) -> None:
    with FakeLLMServer(garbage()) as srv:
        lm = judge(srv, tmp_path, "direct", reask=reask)
        lm.generate_until(requests_for(lm, DOCS[:4]))
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("prb-judge: warning: none of the 4 replies had a verdict")
    assert "system_template" in err and (("reask=1" in err) != reask)
    with FakeLLMServer(scripted(["no idea", "Result: A"])) as srv:
        lm = judge(srv, tmp_path / "mixed", "direct")
        lm.generate_until(requests_for(lm, DOCS[:4]))
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("arg", ["max_cost", "timeout", "max_wait", "rpm", "input_cost_per_mtok"])
def test_non_finite_numbers_are_refused(tmp_path: Path, arg: str) -> None:
    extra = {"output_cost_per_mtok": 1.0} if arg == "input_cost_per_mtok" else {}
    for value in (math.inf, math.nan):
        with pytest.raises(JudgeConfigError, match=f"'{arg}': Input should be a finite number"):
            JudgeLM(model="openai/x", api_base="http://127.0.0.1:9/v1", **{arg: value}, **extra)


def test_404_and_401_messages_name_model_url_and_key_variable(tmp_path: Path, monkeypatch: Any) -> None:
    with FakeLLMServer() as srv:
        # A provider whose 404 litellm reports as a plain APIError.
        monkeypatch.setenv("HUGGINGFACE_API_KEY", "hf-test-key-0123456789")
        lm = JudgeLM(model="huggingface/fake", api_base=srv.url + "/wrong", cache_dir=str(tmp_path))
        with pytest.raises(JudgeFatalError, match="or its URL was not found") as info:
            lm.generate_until(requests_for(lm, DOCS[:1]))
        assert "temperature" not in str(info.value)
        srv.set_faults({"401": 1.0})
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong-0123456789")
        lm = JudgeLM(model="anthropic/fake", api_base=srv.url, cache_dir=str(tmp_path))
        with pytest.raises(JudgeFatalError, match="check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN"):
            lm.generate_until(requests_for(lm, DOCS[:1]))
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        lm = JudgeLM(model="openai/fake", api_base=srv.openai_base, cache_dir=str(tmp_path))
        with pytest.raises(JudgeFatalError, match=r"check OPENAI_API_KEY \(not set: the server wants a key"):
            lm.generate_until(requests_for(lm, DOCS[:1]))


# --------------------------------------------------------------------------- claims


def test_claims_exclude_other_owners_and_lapse(tmp_path: Path) -> None:
    a, b = ClaimBoard(tmp_path, lease=0.3), ClaimBoard(tmp_path, lease=0.3)
    assert a.try_claim("k1") and not b.try_claim("k1")
    a.release("k1")
    assert b.try_claim("k1") and not a.try_claim("k1")
    b.renew()
    time.sleep(0.2)
    b.renew()
    time.sleep(0.2)
    assert not a.try_claim("k1")  # renewed: still b's
    time.sleep(0.35)
    assert a.try_claim("k1")  # b stopped renewing (as if it died elsewhere): lapsed
    # A claim whose process is gone on this machine is taken over at once, long
    # before its lease ends; a live owner's is not.
    c = ClaimBoard(tmp_path, lease=60)
    c.pid = _dead_pid()
    assert c.try_claim("k2") and a.try_claim("k2")
    assert b.try_claim("k3") and not a.try_claim("k3")
    for board in (a, b, c):
        board.close()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_two_runs_sharing_a_cache_concurrently_send_each_request_once(tmp_path: Path) -> None:
    results: dict[str, list[str]] = {}

    def run(name: str, srv: FakeLLMServer) -> None:
        lm = judge(srv, tmp_path, "direct", num_concurrent=4)
        results[name] = lm.generate_until(requests_for(lm, DOCS), disable_tqdm=True)

    with FakeLLMServer(chosen_policy(), latency=0.05, record_requests=False) as srv:
        threads = [threading.Thread(target=run, args=(name, srv)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert srv.stats()["total_requests"] == len(DOCS)
    assert letters(results["a"]) == letters(results["b"]) == expected(DOCS)
    assert cache_info(tmp_path).entries == len(DOCS)

"""Soft verdicts (``logprobs=``): the fake server's log-probabilities checked against the
openai SDK's own response types, the verdict token found in them, the real JudgeLM with
both transports and real sockets, the cache key, and a server that returns none."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from prb_tasks.judge.errors import JudgeConfigError, JudgeFatalError
from prb_tasks.judge.request import ChatRequest
from prb_tasks.replies.soft_verdict import SoftVerdict, read_mark, soft_verdict, verdict_offset, with_mark
from prb_tasks.replies.verdict import parse_verdict
from prb_tasks.scoring.official import official_judgment
from prb_tasks.testing.fake_logprobs import reply_logprobs
from prb_tasks.testing.fake_server import FakeLLMServer, Message, always, garbage
from tests.judge.test_judge_model import (
    DOCS,
    KEY,
    TRANSPORTS,
    chosen_policy,
    expected,
    judge,
    letters,
    requests_for,
)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


def _post(srv: FakeLLMServer, body: dict[str, Any]) -> dict[str, Any]:
    import json
    import urllib.request

    request = urllib.request.Request(f"{srv.openai_base}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def test_fake_logprobs_are_a_chat_completion_by_the_openai_sdk() -> None:
    with FakeLLMServer(always("B"), confidence=lambda prompt, reply: 0.8) as srv:
        data = _post(srv, {"model": "fake", "messages": [{"role": "user", "content": "Which? Result: A or B"}],
                           "logprobs": True, "top_logprobs": 4})
        plain = _post(srv, {"model": "fake", "messages": [{"role": "user", "content": "x"}]})
    completion = ChatCompletion.model_validate(data)  # raises on any field of the wrong shape
    tokens = completion.choices[0].logprobs.content  # type: ignore[union-attr]
    assert tokens is not None
    assert "".join(t.token for t in tokens) == completion.choices[0].message.content
    for token in tokens:
        assert bytes(token.bytes or []) == token.token.encode()
        assert len(token.top_logprobs) == 4
        ranked = [t.logprob for t in token.top_logprobs]
        assert ranked == sorted(ranked, reverse=True) and token.logprob == ranked[0]
    verdict = next(t for t in tokens if t.token.strip() == "B")
    assert {t.token.strip(): round(math.exp(t.logprob), 6) for t in verdict.top_logprobs[:2]} == {"B": 0.8, "A": 0.18}
    assert ChatCompletion.model_validate(plain).choices[0].logprobs is None  # not asked, none sent


def _tokens(text: str, p_first: float, top: int = 5) -> list[dict[str, Any]]:
    letter_p = p_first if parse_verdict(text).letter == "A" else 1 - p_first
    return reply_logprobs(text, top, letter_p)["content"]


@pytest.mark.parametrize("text", [
    "The answer fits.\nResult: A",
    "<think>Response B is longer. Result: B?</think>\n**Result:** A",
    "Both have merits, but {\"choice\": \"A\"}",
    "A",
    "Final verdict: [[A]] since B misses the point",
])
def test_the_verdict_token_is_where_parse_verdict_reads_it(text: str) -> None:
    letter, offset = verdict_offset(text) or ("?", -1)
    assert letter == "A" and text[offset] == "A"
    # Reasoning sent apart by the server comes first in our text but not in the tokens.
    tokens = _tokens(text.split("</think>")[-1], 0.7)
    soft = soft_verdict(text, tokens)
    assert soft is not None and soft.p_first == pytest.approx(0.7 / (0.7 + 0.27))


def test_no_soft_verdict_without_a_verdict_or_its_token() -> None:
    assert soft_verdict("I cannot decide.", _tokens("I cannot decide.", 0.7)) is None
    # Tokens of another text: the letter is not where the verdict is.
    assert soft_verdict("Result: A", _tokens("Result: A and more words", 0.7)) is None
    # A lower-case verdict is weighed against the other lower-case letter only.
    tokens = [{"token": " b", "logprob": math.log(0.6), "top_logprobs": [
        {"token": " b", "logprob": math.log(0.6)}, {"token": " B", "logprob": math.log(0.3)},
        {"token": " a", "logprob": math.log(0.1)}]}]
    text = "Result: b"
    tokens = [{"token": "Result:", "logprob": 0.0, "top_logprobs": []}, *tokens]
    soft = soft_verdict(text, tokens)
    assert soft is not None and soft.p_first == pytest.approx(0.1 / 0.7) and soft.mass == pytest.approx(0.7)


def test_the_mark_changes_no_reading_of_the_verdict() -> None:
    for text in ("The answer fits.\nResult: B", "b", "<think>long</think>Result: A", "Result: Response B"):
        marked = with_mark(text, SoftVerdict(0.25, 0.9))
        assert parse_verdict(marked) == parse_verdict(text)
        assert official_judgment(marked) == official_judgment(text)
        assert read_mark(marked) == SoftVerdict(0.25, 0.9)
    # After a re-ask the follow-up's mark is the one read.
    both = with_mark("Unsure", SoftVerdict(0.5, 0.1)) + "\n\n[re-ask] " + with_mark("Result: A", SoftVerdict(0.9, 1))
    assert read_mark(both) == SoftVerdict(0.9, 1.0) and parse_verdict(both).letter == "A"
    assert read_mark("Result: A") is None


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_judge_reads_soft_verdicts_that_agree_with_its_hard_ones(tmp_path: Path, transport: str) -> None:
    def confidence(prompt: str, reply: str) -> float:
        return 0.6 + 0.3 * (len(prompt) % 2)

    docs = DOCS[:8]
    with FakeLLMServer(chosen_policy(), confidence=confidence) as srv:
        lm = judge(srv, tmp_path, transport, logprobs=3)
        out = lm.generate_until(requests_for(lm, docs))
        bodies = [r["body"] for r in srv.requests]
    assert all(b["logprobs"] is True and b["top_logprobs"] == 3 for b in bodies)
    assert letters(out) == expected(docs)
    for text, doc in zip(out, docs):
        soft = read_mark(text)
        assert soft is not None
        sure = confidence(doc["prompt"], "")
        p_letter = sure / (sure + 0.9 * (1 - sure))
        assert soft.p_first == pytest.approx(p_letter if doc["chosen_position"] == "A" else 1 - p_letter, abs=1e-5)
        # The soft verdict's argmax is the hard verdict.
        assert (soft.p_first > 0.5) == (parse_verdict(text).letter == "A")


def test_a_reply_without_a_verdict_is_marked_as_having_no_soft_one(tmp_path: Path) -> None:
    from prb_tasks.replies.soft_verdict import has_mark

    with FakeLLMServer(garbage()) as srv:
        lm = judge(srv, tmp_path, "direct", logprobs=True)
        out = lm.generate_until(requests_for(lm, DOCS[:2]))
    assert all(has_mark(t) and read_mark(t) is None and parse_verdict(t).outcome == "unparsed" for t in out)


def test_an_answer_cached_without_logprobs_never_answers_a_request_for_them(tmp_path: Path) -> None:
    with FakeLLMServer(chosen_policy()) as srv:
        plain = judge(srv, tmp_path, "direct").generate_until(requests_for(judge(srv, tmp_path), DOCS[:4]))
        assert all(read_mark(t) is None for t in plain)
        srv.reset()
        lm = judge(srv, tmp_path, "direct", logprobs=True)
        soft = lm.generate_until(requests_for(lm, DOCS[:4]))
        assert srv.stats()["total_requests"] == 4  # none from the cache
        assert all(read_mark(t) is not None for t in soft)
        srv.reset()
        again = lm.generate_until(requests_for(lm, DOCS[:4]))
        assert srv.stats()["total_requests"] == 0 and again == soft  # the marks come from the cache
    request = ChatRequest(messages=({"role": "user", "content": "x"},), top_logprobs=5)
    assert request.params() == {"logprobs": True, "top_logprobs": 5}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_server_without_logprobs_stops_the_run_in_one_line(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer(always("A"), logprobs=False) as srv:
        lm = judge(srv, tmp_path, transport, logprobs=True, num_concurrent=1)
        with pytest.raises(JudgeFatalError) as caught:
            lm.generate_until(requests_for(lm, DOCS[:3]))
    message = str(caught.value)
    assert "\n" not in message
    assert "returned no log-probabilities" in message and "logprobs=5" in message and srv.openai_base in message


def test_logprobs_settings_are_checked(tmp_path: Path) -> None:
    with FakeLLMServer(always("A")) as srv:
        with pytest.raises(JudgeConfigError, match="'logprobs'.*2 to 20"):
            judge(srv, tmp_path, logprobs=1)
        with pytest.raises(JudgeConfigError, match="logprobs cannot be read from batch answers"):
            judge(srv, tmp_path, model="openai/gpt-4o-mini", api_base=None, logprobs=True, batch=True)
        assert judge(srv, tmp_path, logprobs="false").settings.logprobs == 0


def test_only_pairwise_verdicts_ask_for_logprobs(tmp_path: Path) -> None:
    def policy(messages: list[Message], model: str) -> str:
        return "Score: 7"

    with FakeLLMServer(policy) as srv:
        lm = judge(srv, tmp_path, "direct", logprobs=True)
        request = lm.to_request("Rate it. Score: N", {}, reply_form=None)
    assert request.top_logprobs is None and "logprobs" not in request.params()

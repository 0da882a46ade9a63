"""Replies whose token budget went to hidden reasoning (finish reason ``length``, no verdict):
counted apart and named, kept through the cache, and asked again with a larger budget only
when ``reasoning_retry_tokens`` says so, which the reply and the summary then record."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.judge.reasoning_budget import is_cut, reasoning_line
from prb_tasks.judge.usage import take_last_summary
from prb_tasks.replies.verdict import parse_verdict
from prb_tasks.testing.fake_server import FakeLLMServer, always, scripted
from tests.judge.test_judge_model import DOCS, KEY, TRANSPORTS, judge, requests_for

GEN = {"until": [], "max_gen_toks": 512, "temperature": 0.0}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_reply_cut_off_in_its_reasoning_is_counted_apart_and_named(tmp_path: Path, transport: str) -> None:
    with FakeLLMServer(scripted(["<think>First, weigh the user's wish against", "Result: A"])) as srv:
        lm = judge(srv, tmp_path, transport, num_concurrent=1)
        out = lm.generate_until(requests_for(lm, DOCS[:2], GEN))
        summary = take_last_summary()
        srv.reset()
        again = judge(srv, tmp_path, transport, num_concurrent=1).generate_until(requests_for(lm, DOCS[:2], GEN))
        assert srv.stats()["total_requests"] == 0 and again == out  # kept as it came, with its mark
        cached = take_last_summary()
    assert is_cut(out[0]) and parse_verdict(out[0]).outcome == "unparsed" and not is_cut(out[1])
    for s in (summary, cached):
        assert s is not None and s["reasoning_budget"]["cut_in_reasoning"] == 1
    line = reasoning_line(summary or {})
    assert line is not None and "\n" not in line
    assert "1 replies spent their whole token budget (max_tokens=512) on hidden reasoning" in line
    assert "reasoning_retry_tokens=N" in line


def test_a_longer_budget_is_asked_for_only_when_set_and_recorded(tmp_path: Path) -> None:
    replies = ["<think>Weighing both answers against the profile", "<think>Done.</think>\nResult: B"]
    with FakeLLMServer(scripted(replies)) as srv:
        lm = judge(srv, tmp_path, "direct", num_concurrent=1, reasoning_retry_tokens=4096)
        out = lm.generate_until(requests_for(lm, DOCS[:1], GEN))
        budgets = [r["body"]["max_tokens"] for r in srv.requests]
    assert budgets == [512, 4096]
    assert out[0].startswith("<think>[prb:asked-again max_tokens=4096 after 512 went to reasoning]</think>")
    assert parse_verdict(out[0]).letter == "B"
    summary = take_last_summary()
    assert summary is not None and summary["reasoning_retries_sent"] == 1
    assert summary["reasoning_budget"] == {"cut_in_reasoning": 0, "asked_again": 1,
                                           "asked_again_max_tokens": [4096], "cut_budgets": []}
    line = reasoning_line(summary)
    assert line is not None and "asked again with max_tokens=4096" in line


def test_a_reply_that_ran_out_without_reasoning_is_not_called_reasoning(tmp_path: Path) -> None:
    with FakeLLMServer(always("A")) as srv:
        lm = judge(srv, tmp_path, "direct", reasoning_retry_tokens=4096)
        out = lm.generate_until(requests_for(lm, DOCS[:2], GEN))
        assert len(srv.requests) == 2
    assert not any(is_cut(o) for o in out)
    assert reasoning_line(take_last_summary() or {}) is None


def test_a_soft_verdict_mark_is_not_reasoning(tmp_path: Path) -> None:
    # A plain model cut off mid-sentence while asked for logprobs: its reply carries prb's
    # `<think>[prb:verdict-probs none]</think>` mark, which is no reasoning of the model's.
    from prb_tasks.judge.client import CallResult
    from prb_tasks.judge.reasoning_budget import mark_cut
    from prb_tasks.judge.request import ChatRequest
    from prb_tasks.replies.soft_verdict import NO_SOFT_MARK

    request = ChatRequest(messages=({"role": "user", "content": "x"},), max_tokens=48, top_logprobs=5)
    plain = CallResult(text=NO_SOFT_MARK + "The answer that best fits is", finish_reason="length")
    assert mark_cut(plain, request) == plain
    thinking = CallResult(text=NO_SOFT_MARK + "<think>Weighing", finish_reason="length")
    assert is_cut(mark_cut(thinking, request).text)

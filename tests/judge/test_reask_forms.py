"""`reask=1` asks for what each task reads: a 1-10 rating (rewardbench2_judge), `Score: N`
(personalllm_bon_judge), a boxed verdict (rmbench_judge), `Result: A/B` (pairwise tasks); free text
(answers a policy writes) is never re-asked. The real JudgeLM against the fake server, on documents
the real builders make."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance

from prb_tasks.data.rewardbench2.schema import Row as RB2Row
from prb_tasks.data.rmbench.schema import Row as RMBRow
from prb_tasks.documents.rewardbench2 import rating_docs
from prb_tasks.documents.rmbench import pair_docs
from prb_tasks.judge.model import JudgeLM
from prb_tasks.judge.options import DEFAULT_REASK_PROMPT
from prb_tasks.judge.reply_forms import FORMS, form_name
from prb_tasks.judge.usage import take_last_summary
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.replies.boxed_verdict import parse_boxed
from prb_tasks.replies.pointwise import parse_score
from prb_tasks.replies.ratings import parse_rating
from prb_tasks.replies.verdict import parse_verdict
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm

KEY = "sk-prb-reask-forms-0000"
GEN = {"until": [], "max_gen_toks": 256, "temperature": 0.0, "do_sample": False}
FOLLOW_UPS = {FORMS["rating"].reask_prompt: "7", FORMS["score"].reask_prompt: "Score: 6",
              FORMS["boxed"].reask_prompt: "\\boxed{B>A}", DEFAULT_REASK_PROMPT: "Result: B"}
FIRST = "Let me think about this one."  # no verdict of any form


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


def _docs(tmp_path: Path) -> dict[str, list[dict[str, Any]]]:
    from prb_tasks.documents import personalllm

    rb2 = RB2Row(0, "r1", "Math", "What is 2 + 2?", ("4", "5", "22", "3"), 1)
    rmb = RMBRow(0, "7", "chat", "Name a colour.", ("Red.", "Red is one.", "**Red**"), ("Loud.", "Loud is.", "**L**"))
    pllm = write_personalllm(tmp_path / "pllm", fixture_rows(12, seed=1))
    return {
        "rating": rating_docs(rb2)[:2],
        "score": personalllm.build_docs("bon_judge", data_dir=str(pllm), n_users=2)[:2],
        "boxed": pair_docs(rmb)[:2],
        "free": [{"variant": "gen", "prompt": "Write a haiku."}],
        "pairwise": [{"prompt": "Which is better, A or B?", "chosen_position": "A"}],
    }


def _requests(lm: JudgeLM, docs: list[dict[str, Any]]) -> list[Instance]:
    return [Instance("generate_until", doc, (lm.apply_chat_template([{"role": "user", "content": doc_prompt(doc)}]),
                                             dict(GEN)), i) for i, doc in enumerate(docs)]


def _judge(server: FakeLLMServer, cache: Path, **args: Any) -> JudgeLM:
    return JudgeLM(model="openai/fake", api_base=server.openai_base, api_key_env="PRB_TEST_KEY",
                   cache_dir=str(cache), num_concurrent=4, **args)


READS = {"rating": lambda t: parse_rating(t), "score": lambda t: parse_score(t).value,
         "boxed": lambda t: parse_boxed(t).form, "pairwise": lambda t: parse_verdict(t).letter}
EXPECTED = {"rating": 7, "score": 6.0, "boxed": "B>A", "pairwise": "B"}


def test_each_form_is_reasked_in_its_own_words_and_cached(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    assert {name: {form_name(d) for d in group} for name, group in docs.items()} == {
        "rating": {"rating"}, "score": {"score"}, "boxed": {"boxed"}, "free": {None}, "pairwise": {"pairwise"}}
    follow_ups: list[str] = []

    def policy(messages: list[Message], model: str) -> str:
        last = messages[-1]["content"]
        if last in FOLLOW_UPS:
            assert messages[-2] == {"role": "assistant", "content": FIRST}
            follow_ups.append(last)
            return FOLLOW_UPS[last]
        return FIRST

    everything = [d for group in docs.values() for d in group]
    with FakeLLMServer(policy) as srv:
        lm = _judge(srv, tmp_path / "cache", reask=True)
        out = lm.generate_until(_requests(lm, everything))
        sent = srv.stats()["total_requests"]
        srv.reset()
        again = _judge(srv, tmp_path / "cache", reask=True).generate_until(_requests(lm, everything))
        assert srv.stats()["total_requests"] == 0 and again == out  # the re-asks come from the cache too
    by_form = dict(zip([name for name, group in docs.items() for _ in group], out))
    for name, read in READS.items():
        replies = [text for (form, text) in zip([n for n, g in docs.items() for _ in g], out) if form == name]
        assert all(read(text) == EXPECTED[name] for text in replies), (name, replies)
        assert sorted(follow_ups).count(FORMS[name].reask_prompt) == len(docs[name])
    # Free text is not re-asked: one request for it, two for each of the others.
    assert by_form["free"] == FIRST
    assert sent == len(everything) + len(everything) - len(docs["free"])
    summary = take_last_summary()  # the second run: the re-asks came from the cache, nothing was sent
    assert summary["reasks"] == len(everything) - len(docs["free"]) and summary["requests_sent"] == 0
    assert "Result: A" not in FORMS["rating"].reask_prompt + FORMS["score"].reask_prompt + FORMS["boxed"].reask_prompt


def test_readable_replies_are_not_reasked_and_reask_prompt_stays_pairwise(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    answers = {"rating": "Fine.\n8", "score": "Fits.\nScore: 9", "boxed": "\\boxed{A>>B}"}

    def policy(messages: list[Message], model: str) -> str:
        last = messages[-1]["content"]
        if last == "Just the letter, please.":
            return "A"
        if "\\boxed{A>>B}" in last:
            return answers["boxed"]
        if "Score: N" in messages[0]["content"] or "Score: N" in last:
            return answers["score"]
        if "rate the response from 1 to 10" in last:
            return answers["rating"]
        return "Hmm."

    group = docs["rating"] + docs["score"] + docs["boxed"] + docs["pairwise"]
    with FakeLLMServer(policy) as srv:
        lm = _judge(srv, tmp_path / "cache2", reask=True, reask_prompt="Just the letter, please.")
        out = lm.generate_until(_requests(lm, group))
        assert srv.stats()["total_requests"] == len(group) + 1  # only the pairwise reply was re-asked
    assert out[-1] == "Hmm.\n\n[re-ask] A"
    assert [parse_rating(t) for t in out[:2]] == [8, 8]
    assert [parse_score(t).value for t in out[2:4]] == [9.0, 9.0]
    assert [parse_boxed(t).form for t in out[4:6]] == ["A>>B", "A>>B"]

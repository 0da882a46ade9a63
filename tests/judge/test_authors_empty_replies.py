"""An empty judge reply under each task's authors' protocol is what their code makes of it.

allenai's ``run_generative_v2.py`` (reward-bench @05a9005) sends each rating request once and
reads an empty reply as unrated (-1): ``rewardbench2_judge`` must not send it again unless the
user chose prb's re-asks (``reask=1``). RM-Bench's authors publish no judge code, so
``rmbench_judge`` keeps prb's protocol, which asks an empty reply once more. The real JudgeLM
against the fake server over a socket, on documents the real builders make.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance

from prb_tasks.data.rewardbench2.schema import Row as RB2Row
from prb_tasks.data.rmbench.schema import Row as RMBRow
from prb_tasks.documents.rewardbench2 import rating_docs
from prb_tasks.documents.rmbench import pair_docs
from prb_tasks.judge.model import JudgeLM
from prb_tasks.judge.usage import take_last_summary
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.replies.ratings import parse_rating
from prb_tasks.scoring.rewardbench2_ratings import best_of_n_from_ratings
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from tests.scoring.test_rewardbench2_ratings import _theirs_parse, _theirs_row

KEY = "sk-prb-authors-empty-0000"
GEN = {"until": [], "max_gen_toks": 1024, "temperature": 0.0, "do_sample": False}
RB2 = RB2Row(0, "r1", "Math", "What is 2 + 2?", ("4", "5", "22", "3"), 1)
RMB = RMBRow(0, "7", "chat", "Name a colour.", ("Red.", "Red is one.", "**Red**"), ("Loud.", "Loud is.", "**L**"))


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


def empty_first(later: str) -> Any:
    """A fake-server policy: "" the first time a conversation arrives, ``later`` after."""
    seen: set[str] = set()
    lock = threading.Lock()

    def policy(messages: list[Message], model: str) -> str:
        key = json.dumps(messages, sort_keys=True)
        with lock:
            first = key not in seen
            seen.add(key)
        return "" if first else later

    return policy


def _run(server: FakeLLMServer, cache: Path, docs: list[dict[str, Any]], **args: Any) -> list[str]:
    lm = JudgeLM(model="openai/fake", api_base=server.openai_base, api_key_env="PRB_TEST_KEY",
                 cache_dir=str(cache), num_concurrent=1, **args)
    requests = [Instance("generate_until", doc, (lm.apply_chat_template([{"role": "user", "content": doc_prompt(doc)}]),
                                                 dict(GEN)), i) for i, doc in enumerate(docs)]
    return lm.generate_until(requests)


def test_rewardbench2_judge_scores_an_empty_first_reply_unrated_as_allenai(tmp_path: Path) -> None:
    docs = rating_docs(RB2)
    with FakeLLMServer(empty_first("Correct and clear.\n\n9")) as srv:
        out = _run(srv, tmp_path / "cache", docs)
        assert srv.stats()["total_requests"] == len(docs)  # one request per response, as theirs
        srv.reset()
        again = _run(srv, tmp_path / "cache", docs)
        assert srv.stats()["total_requests"] == 0 and again == out  # the empty replies are kept: same score
    assert out == [""] * len(docs)
    ours = [parse_rating(text) for text in out]
    theirs = [_theirs_parse(text) for text in out]
    assert ours == theirs == [-1] * len(docs)
    assert best_of_n_from_ratings(ours) == _theirs_row(theirs) == 0.25
    summary = take_last_summary()  # the second run's
    assert summary["cache_hits"] == len(docs) and summary["empty_scored"] == 0


def test_rewardbench2_judge_usage_line_says_empty_replies_were_scored(tmp_path: Path, capsys: Any) -> None:
    docs = rating_docs(RB2)
    with FakeLLMServer(empty_first("9")) as srv:
        _run(srv, tmp_path / "cache", docs)
    printed = capsys.readouterr().out
    assert f"{len(docs)} empty replies were scored as they came" in printed
    assert "asked again once" not in printed and "counted as unparsed" not in printed
    summary = take_last_summary()
    assert summary["empty_scored"] == summary["empty_completions"] == len(docs) and summary["empty_retries"] == 0


def test_reask_is_the_users_departure_and_sends_the_empty_reply_again(tmp_path: Path) -> None:
    docs = rating_docs(RB2)
    with FakeLLMServer(empty_first("Correct and clear.\n\n9")) as srv:
        out = _run(srv, tmp_path / "cache", docs, reask=True)
        assert srv.stats()["total_requests"] == 2 * len(docs)
    assert [parse_rating(text) for text in out] == [9] * len(docs)
    assert take_last_summary()["empty_retries"] == len(docs)


def test_rmbench_judge_keeps_prbs_second_ask(tmp_path: Path) -> None:
    docs = pair_docs(RMB)[:4]
    with FakeLLMServer(empty_first("\\boxed{A>B}")) as srv:
        out = _run(srv, tmp_path / "cache", docs)
        assert srv.stats()["total_requests"] == 2 * len(docs)
    assert out == ["\\boxed{A>B}"] * len(docs)

"""Best-of-N ``preset: official`` sends the authors' grader settings itself (BoN/evaluate.py @a5c6814:
``SamplingParams(temperature=0.0, max_tokens=32)``), over the task YAML's 512 new tokens; a
``--gen_kwargs`` key the user gives still wins, with one line. The real JudgeLM against the fake
server over a socket, on grading documents the real builder makes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lm_eval.api.instance import Instance

from prb_tasks.common.harness_args import declare, parse
from prb_tasks.documents.personalized_rb_bon import build_docs
from prb_tasks.judge.model import JudgeLM
from prb_tasks.prompts.official_templates import (
    BON_GRADE,
    BON_GRADE_SYSTEM,
    BON_POLICY,
    BON_POLICY_SYSTEM,
    write_templates,
)
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.testing.fake_server import FakeLLMServer

KEY = "sk-prb-authors-gen-0000"
# The task YAML's settings (prb_tasks/tasks/personalized_rb_bon/personalized_rb_bon_grade.yaml).
YAML_GEN = {"until": [], "max_gen_toks": 512, "temperature": 0.0, "do_sample": False}
SCRIPT = ('def f(item):\n    return [\n        {"role": "system", "content": "Grader line."},\n'
          '        {"role": "user", "content": item},\n    ]\n')


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_TEST_KEY", KEY)


@pytest.fixture
def run_args() -> Iterator[None]:
    yield
    declare(None)


def grade_docs(tmp_path: Path, preset: str) -> list[dict[str, Any]]:
    templates = tmp_path / "official"
    write_templates(templates, {BON_POLICY_SYSTEM: SCRIPT.encode(), BON_POLICY: b"{question}\n{profile}\n",
                                BON_GRADE_SYSTEM: SCRIPT.encode(), BON_GRADE: b"{question}\n{answer}\n{aspects}\n"})
    cands = tmp_path / "cands.jsonl"
    cands.write_text("".join(json.dumps({"pair_key": f"art/{i}", "candidates": ["one", "two"]}) + "\n"
                             for i in range(2)), encoding="utf-8")
    extra = {"templates": str(templates)} if preset == "official" else {}
    return build_docs("bon_grade", data_dir="sample", preset=preset, candidates=str(cands), **extra)


def sent_budgets(server: FakeLLMServer, tmp_path: Path, docs: list[dict[str, Any]], **given: Any) -> list[Any]:
    """What each request went out with; ``given``: the run's --gen_kwargs, merged into the YAML's as lm-eval does."""
    lm = JudgeLM(model="openai/fake", api_base=server.openai_base, api_key_env="PRB_TEST_KEY",
                 cache_dir=str(tmp_path / "cache"), cache="off", num_concurrent=1)
    requests = [Instance("generate_until", doc, (lm.apply_chat_template(
        [{"role": "system", "content": doc["system_prompt"]}, {"role": "user", "content": doc_prompt(doc)}]),
        {**YAML_GEN, **given}), i, metadata=("personalized_rb_bon_grade", i, 1)) for i, doc in enumerate(docs)]
    lm.generate_until(requests)
    return [(r["body"].get("max_tokens"), r["body"].get("temperature")) for r in server.requests]


def test_the_preset_sends_the_authors_grader_budget(tmp_path: Path, capsys: Any) -> None:
    docs = grade_docs(tmp_path, "official")
    with FakeLLMServer(lambda messages, model: "[2, 1]") as srv:
        sent = sent_budgets(srv, tmp_path, docs)
    assert sent == [(32, 0.0)] * len(docs) == [(32, 0.0)] * 4
    assert "--gen_kwargs" not in capsys.readouterr().err


def test_prbs_own_grader_keeps_the_task_budget(tmp_path: Path) -> None:
    docs = grade_docs(tmp_path, "prb")
    with FakeLLMServer(lambda messages, model: "Aspect 1: 2") as srv:
        assert sent_budgets(srv, tmp_path, docs) == [(512, 0.0)] * len(docs)


def test_an_explicit_gen_kwargs_wins_with_one_line(tmp_path: Path, capsys: Any, run_args: None) -> None:
    docs = grade_docs(tmp_path, "official")
    declare(parse(["--model", "prb-judge", "--tasks", "personalized_rb_bon_grade", "--gen_kwargs",
                   "max_gen_toks=64"]))
    with FakeLLMServer(lambda messages, model: "[2]") as srv:
        sent = sent_budgets(srv, tmp_path, docs, max_gen_toks=64)
    assert sent == [(64, 0.0)] * len(docs)
    lines = [line for line in capsys.readouterr().err.splitlines() if "--gen_kwargs" in line]
    assert lines == ["prb-judge: personalized_rb_bon_grade: --gen_kwargs max_gen_toks=64 is used, not the authors' "
                     "max_gen_toks=32 this task's preset sets; drop it from --gen_kwargs to run as the authors do"]


def test_an_explicit_gen_kwargs_equal_to_theirs_says_nothing(tmp_path: Path, capsys: Any, run_args: None) -> None:
    docs = grade_docs(tmp_path, "official")
    declare(parse(["--model", "prb-judge", "--tasks", "personalized_rb_bon_grade", "--gen_kwargs",
                   "max_gen_toks=32"]))
    with FakeLLMServer(lambda messages, model: "[2]") as srv:
        assert sent_budgets(srv, tmp_path, docs, max_gen_toks=32) == [(32, 0.0)] * len(docs)
    assert "--gen_kwargs" not in capsys.readouterr().err


def test_empty_grader_replies_are_told_as_scored_not_unparsed(tmp_path: Path, capsys: Any) -> None:
    from prb_tasks.replies.bon_official import official_grade

    docs = grade_docs(tmp_path, "official")
    with FakeLLMServer(lambda messages, model: "") as srv:
        sent_budgets(srv, tmp_path, docs)
        assert srv.stats()["total_requests"] == len(docs)  # their vLLM run reads one reply per request
    printed = capsys.readouterr().out
    assert f"{len(docs)} empty replies were scored as they came" in printed and "counted as unparsed" not in printed
    assert official_grade("") == 0.0  # what the preset makes of them: their evaluate.py's 0

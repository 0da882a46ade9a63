"""Samples files hold each rendered prompt once: in the request as sent, not again in the doc."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prb_tasks.documents.pairs import to_dataset
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.report.outcomes import _with_prompt
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.runner import read_samples, run_cli, sent_prompt

KEY = "sk-prb-samples-once-0000"


def test_loader_hands_lm_eval_a_key_and_the_text_stays_reachable():
    docs = build_docs("art", "profile", data_dir="sample", k=2)
    handed = to_dataset(docs)["test"]
    assert handed.features.keys() == {**docs[0], "prompt_key": None}.keys() - {"prompt"}
    for built, doc in zip(docs, handed):
        assert "prompt" not in doc and doc_prompt(doc) == built["prompt"]
        assert doc["system_prompt"] == built["system_prompt"]  # the judge rules stay (lm-eval's description)
    # The same text always gets the same key: another task of the run shares it.
    assert to_dataset(build_docs("art", "profile", data_dir="sample", k=2))["test"][0]["prompt_key"] == \
        handed[0]["prompt_key"]


def test_judge_samples_write_each_prompt_once(tmp_path: Path):
    out = tmp_path / "runs"
    with FakeLLMServer(record_requests=False) as server:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                        f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                        f"cache_dir={tmp_path / 'cache'}",
                        "--tasks", "personalized_rb_profile_art", "--metadata", '{"data_dir": "sample", "k": 3}',
                        "--output_path", str(out), "--log_samples"], cwd=tmp_path, env={"PRB_TEST_KEY": KEY})
    assert proc.returncode == 0, proc.stderr[-3000:]
    built = build_docs("art", "profile", data_dir="sample", k=3)
    samples = read_samples(out, "personalized_rb_profile_art")
    assert len(samples) == len(built)
    for sample in samples:
        prompt = built[sample["doc_id"]]["prompt"]
        assert "prompt" not in sample["doc"] and "Post 3 (Category:" in prompt
        assert sent_prompt(sample) == prompt
        # A stretch of a post (no character JSON would escape) occurs once in the whole line.
        post = prompt[prompt.index("Post 3 (Category:"):]
        stretch = re.search(r"[A-Za-z ,.]{40}", post.split("\n", 1)[1]).group()
        assert json.dumps(sample, ensure_ascii=False).count(stretch) == 1


def test_report_reads_the_prompt_back_from_the_request():
    doc = {"pair_key": "art/0", "prompt_key": "k"}
    chat = [{"role": "system", "content": "rules"}, {"role": "user", "content": "the prompt"}]
    as_text = {"arguments": {"gen_args_0": {"arg_0": json.dumps(chat), "arg_1": {}}}}
    as_list = {"arguments": {"gen_args_0": {"arg_0": [json.dumps(chat)], "arg_1": {}}}}
    plain = {"arguments": {"gen_args_0": {"arg_0": "rules\n\nthe prompt", "arg_1": " A"}}}
    assert _with_prompt(doc, as_text)["prompt"] == "the prompt"
    assert _with_prompt(doc, as_list)["prompt"] == "the prompt"
    assert _with_prompt(doc, plain)["prompt"] == "rules\n\nthe prompt"
    assert _with_prompt({**doc, "prompt": "own"}, as_text)["prompt"] == "own"
    assert "prompt" not in _with_prompt(doc, {})

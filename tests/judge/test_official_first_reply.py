"""The official task scores a judge's first reply, exactly as the authors' script does.

The fake server answers every conversation with an empty reply the first time it sees
it and ``Result: B`` on any later ask. The authors send each row once and read the empty
reply as a parse failure, counted as "A"; so every row reads A, and a subset's official
accuracy is the share of its rows whose seeded draw put the chosen answer in A. prb-judge
asks again after an empty reply in its own protocols, never in the official one; lm-eval's
chat backend never asks again. Both must give the authors' numbers.
"""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from tests.conftest import sample_rows
from tests.runner import metric, read_results, read_samples, run_cli

KEY = "sk-prb-official-0000"


def empty_then_b():
    """A fake-server policy: "" the first time a conversation arrives, ``Result: B`` after."""
    seen: set[str] = set()
    lock = threading.Lock()

    def policy(messages: list[Message], model: str) -> str:
        key = json.dumps(messages, sort_keys=True)
        with lock:
            first = key not in seen
            seen.add(key)
        return "" if first else "The second answer fits.\nResult: B"

    return policy


def authors_chosen_in_a(rows: int) -> list[bool]:
    """The authors' draw, written out: one seed per subset, one draw per row in order."""
    random.seed(42)
    return [random.random() < 0.5 for _ in range(rows)]


def expected_official_acc(config: str) -> float:
    draws = authors_chosen_in_a(len(sample_rows(config)))
    # Every reply is empty, every reading fails and counts as A: right exactly where chosen is A.
    return sum(draws) / len(draws)


def check_authors_numbers(results: dict, out: Path) -> None:
    for subset in SUBSETS:
        task = f"personalized_rb_official_{subset.short}"
        assert metric(results, task, "acc_official") == pytest.approx(expected_official_acc(subset.config))
        assert metric(results, task, "parse_fail_official") == 1.0
        assert metric(results, task, "pos_a_rate_official") == 1.0
        # Every reply counted as A: acc_official is exactly an always-A judge's score.
        assert metric(results, task, "always_a_official") == metric(results, task, "acc_official")
        # Our own reading: an empty reply is no verdict, never a letter.
        assert metric(results, task, "acc") == 0.0
        assert metric(results, task, "parse_fail") == 1.0
        for sample in read_samples(out, task):
            assert sample["filtered_resps"][0].strip() == ""


def test_sample_draws_put_chosen_in_both_positions():
    # Guards the test itself: if every draw were A (or B), "all read A" could not tell
    # a first reply from a second one.
    for subset in SUBSETS:
        share = expected_official_acc(subset.config)
        assert 0.0 < share < 1.0


@pytest.mark.slow
def test_prb_judge_scores_the_empty_first_reply(tmp_path):
    def run(server: FakeLLMServer, out: Path, extra: str = "") -> None:
        args = (f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                f"cache_dir={tmp_path / 'cache'},num_concurrent=4{extra}")
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args", args, "--tasks", "personalized_rb_official",
                        "--metadata", json.dumps({"data_dir": "sample"}), "--output_path", str(out), "--log_samples"],
                       cwd=tmp_path, env={"PRB_TEST_KEY": KEY})
        assert proc.returncode == 0, proc.stderr[-3000:]
        # Beside acc_official in the printed table: what it rests on.
        # Wrapped to 120 columns: the sentence is read with its line breaks flattened.
        out = proc.stdout.splitlines()
        (start,) = [i for i, x in enumerate(out) if x.startswith("personalized_rb_official: acc_official")]
        line = " ".join(x.strip() for x in out[start:start + 3])
        assert f"counts {rows} of {rows} replies (100%) as A, having no verdict" in line, line
        assert "a judge that always answers A scores" in line, line
        assert all(len(x) <= 120 for x in out[start:start + 3]), out[start:start + 3]

    rows = sum(len(sample_rows(s.config)) for s in SUBSETS)
    with FakeLLMServer(policy=empty_then_b()) as server:
        run(server, tmp_path / "runs", ",reask=true")
        # One call per row: neither the empty-reply retry nor reask=true asked again.
        assert server.stats()["total_requests"] == rows
        check_authors_numbers(read_results(tmp_path / "runs"), tmp_path / "runs")

        # A re-run scores the same cached first replies; the server, which would now
        # answer "Result: B" to every conversation, is not asked at all.
        server.reset()
        run(server, tmp_path / "again")
        assert server.stats()["total_requests"] == 0
    check_authors_numbers(read_results(tmp_path / "again"), tmp_path / "again")


def test_prb_judge_still_asks_again_in_its_own_protocol(tmp_path):
    # The both-order task keeps the second ask: there the second reply ("Result: B") is scored.
    out = tmp_path / "runs"
    with FakeLLMServer(policy=empty_then_b()) as server:
        args = (f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                f"cache_dir={tmp_path / 'cache'},num_concurrent=4")
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args", args, "--tasks", "personalized_rb_sample_art",
                        "--output_path", str(out), "--log_samples"], cwd=tmp_path, env={"PRB_TEST_KEY": KEY})
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert server.stats()["total_requests"] == 2 * 2 * len(sample_rows("Art_and_Entertainment"))
    results = read_results(out)
    assert metric(results, "personalized_rb_sample_art", "pos_a_rate") == 0.0
    assert metric(results, "personalized_rb_sample_art", "parse_fail") == 0.0


@pytest.mark.slow
def test_lm_eval_chat_backend_scores_the_empty_first_reply(tmp_path):
    out = tmp_path / "runs"
    with FakeLLMServer(policy=empty_then_b()) as server:
        args = (f"model=fake-judge,base_url={server.openai_base}/chat/completions,num_concurrent=4,"
                "max_retries=1")
        proc = run_cli(["eval", "--model", "local-chat-completions", "--model_args", args, "--apply_chat_template",
                        "--tasks", "personalized_rb_official", "--metadata", json.dumps({"data_dir": "sample"}),
                        "--output_path", str(out), "--log_samples"], cwd=tmp_path, env={"OPENAI_API_KEY": KEY})
        assert proc.returncode == 0, proc.stderr[-3000:]
    check_authors_numbers(read_results(out), out)


@pytest.mark.parametrize("variant,batches", [("official", 1), ("both", 2)])
def test_batch_mode_keeps_an_empty_first_answer_only_in_the_official_task(tmp_path, monkeypatch, variant, batches):
    from prb_tasks.documents.personalized_rb import build_docs
    from prb_tasks.judge.model import JudgeLM
    from prb_tasks.testing.fake_batches import BatchScript
    from prb_tasks.testing.fake_server import always
    from tests.judge.test_judge_model import requests_for

    monkeypatch.setenv("PRB_TEST_KEY", KEY)
    docs = build_docs("Art_and_Entertainment", variant, source="sample")[:6]
    with FakeLLMServer(always("B")) as server:
        # The batch answers requests 0 and 2 with an empty text, the rest "Result: B".
        server.batches.script(BatchScript(polls=1, errors={0: "empty", 2: "empty"}))
        lm = JudgeLM(model="openai/gpt-4o-mini", api_base=server.openai_base, api_key_env="PRB_TEST_KEY",
                     cache_dir=str(tmp_path / "cache"), batch=True, batch_poll=0.02, backoff_base=0.01)
        out = lm.generate_until(requests_for(lm, docs))
        # Official: the empty answers are final, nothing is resubmitted. Ours: they go
        # into a second batch, whose answers are scored.
        assert server.stats()["batches"]["created"] == batches
    first_only = [out[0], out[2]]
    assert all(o == "" for o in first_only) if variant == "official" else all("Result: B" in o for o in first_only)
    assert all("Result: B" in o for i, o in enumerate(out) if i not in (0, 2))

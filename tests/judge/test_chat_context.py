"""Compact chat contexts (issue 24, part 3): while ``prb eval`` runs, lm-eval holds a short
reference per request instead of the prompt as JSON, and the files it writes are the
same as with JSON contexts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.judge import chat_context as cc
from prb_tasks.prompts import prompt_store
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.e2e.test_judge_e2e import ENV, KEY, chosen_policy, model_args
from tests.runner import read_samples, run_cli

SUBTASK = "personalized_rb_sample_art"


def _messages(prompt: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Rules shared by every request."}, {"role": "user", "content": prompt}]


def test_compact_context_is_short_and_expands_to_the_json_context() -> None:
    prompt = "Question and profile posts. " * 2000  # about 56 KB, like a profile prompt
    [doc] = prompt_store.stash([{"pair_key": "p1", "prompt": prompt}])
    plain = cc.chat_context(_messages(prompt))
    assert isinstance(plain, cc.ChatMessagesJson) and json.loads(plain)[1]["content"] == prompt
    with cc.compact_contexts():
        compact = cc.chat_context(_messages(prompt))
        again = cc.chat_context(_messages(prompt))
        other = cc.chat_context(_messages(prompt + "!"))  # not a kept prompt: held as text
        assert isinstance(compact, cc.CompactChat) and len(compact) < 60
        assert compact == again and compact != other  # named by content, like JSON contexts
        assert cc.expand_json(compact) == plain
        assert cc.expand_messages(other)[1]["content"] == prompt + "!"
        assert f"{compact}" == plain  # lm-eval's --write_out prints contexts with an f-string
        assert doc["prompt_key"] == prompt_store.kept_key(prompt)
    with pytest.raises(KeyError, match="only while prb eval runs"):
        cc.expand_json(compact)  # entries go when the run ends


def test_a_short_prompt_is_held_as_text_and_never_rendered_again() -> None:
    renders = []

    def recipe(text: str) -> str:
        renders.append(text)
        return text

    short, long = "A short pairwise prompt. " * 40, "A long profile prompt. " * 400  # 1 KB and 9 KB
    for text in (short, long):
        prompt_store.rebuildable(text, lambda text=text: recipe(text))
    with cc.compact_contexts():
        contexts = {text: cc.chat_context(_messages(text)) for text in (short, long)}
        for text, context in contexts.items():
            assert isinstance(context, cc.CompactChat) and cc.expand_messages(context)[1]["content"] == text
            assert json.loads(cc.expand_json(context))[1]["content"] == text
    # Sent and written: the short one from its held text, the long one rendered from its recipe each time.
    assert len(short) < cc.HOLD_TEXT_BELOW <= len(long) and renders == [long, long]


def test_samples_are_expanded_one_copy_at_a_time() -> None:
    prompt = "Another kept prompt. " * 100
    prompt_store.stash([{"prompt": prompt}])
    with cc.compact_contexts():
        compact = cc.chat_context(_messages(prompt))
        samples = {"t": [{"doc_id": 0, "arguments": [(compact, {"until": []})], "prompt_hash": "x"}]}
        cc.fix_prompt_hashes(samples)
        [written] = list(cc.expand_samples(samples["t"]))
    from lm_eval.utils import hash_string

    assert written["arguments"][0][0] == cc._dump([("system", "Rules shared by every request."), ("user", prompt)])
    assert samples["t"][0]["prompt_hash"] == hash_string(written["arguments"][0][0])
    assert samples["t"][0]["arguments"][0][0] is compact  # the run's own sample keeps the reference


def test_without_logged_samples_no_hash_is_taken_and_a_missing_one_is_rendered() -> None:
    prompt = "A kept profile prompt. " * 300
    prompt_store.rebuildable(prompt, lambda: "A kept profile prompt. " * 300)
    prompt_store.stash([{"prompt": prompt}])
    from lm_eval.utils import hash_string

    with cc.compact_contexts(prompt_hashes=False):
        compact = cc.chat_context(_messages(prompt))
        assert cc._HASHES == {}  # no JSON dump, no hash: nothing would read them
        samples = {"t": [{"doc_id": 0, "arguments": [(compact, {"until": []})], "prompt_hash": "x"}]}
        cc.fix_prompt_hashes(samples)  # samples after all (an lm-eval path that logs them): rendered
    assert samples["t"][0]["prompt_hash"] == hash_string(json.dumps(_messages(prompt), ensure_ascii=False))


def _plain_samples(server: FakeLLMServer, cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[int, dict[str, Any]]:
    """The same task through lm-eval's Python API: contexts stay JSON there."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    from prb_tasks.common.resources import tasks_dir
    from prb_tasks.plugin import register_models

    monkeypatch.setenv("PRB_TEST_KEY", KEY)
    register_models()
    out = lm_eval.simple_evaluate(model="prb-judge", model_args=model_args(server, cache), tasks=[SUBTASK],
                                  apply_chat_template=True, log_samples=True,
                                  task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False))
    assert out is not None
    return {s["doc_id"]: s for s in out["samples"][SUBTASK]}


@pytest.mark.slow
def test_prb_eval_writes_the_same_prompts_and_hashes_as_json_contexts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval.utils import hash_string

    with FakeLLMServer(chosen_policy(), record_requests=False) as server:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args", model_args(server, tmp_path / "c1"),
                        "--tasks", SUBTASK, "--output_path", str(tmp_path / "out"), "--log_samples"],
                       cwd=tmp_path, env=ENV)
        assert proc.returncode == 0, proc.stderr[-3000:]
        plain = _plain_samples(server, tmp_path / "c2", monkeypatch)
    written = read_samples(tmp_path / "out", SUBTASK)
    assert len(written) == len(plain) == 24
    for sample in written:
        reference = plain[sample["doc_id"]]
        context = sample["arguments"]["gen_args_0"]["arg_0"]
        assert context == str(reference["arguments"][0][0])
        assert "prb-chat:" not in context and json.loads(context)[-1]["role"] == "user"
        assert sample["prompt_hash"] == reference["prompt_hash"] == hash_string(context)
        assert sample["resps"] == [[str(r) for r in resp] for resp in reference["resps"]]
    results = json.loads(next((tmp_path / "out").rglob("results_*.json")).read_text())
    joined = "".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"]
                     for s in sorted(plain.values(), key=lambda s: s["doc_id"]))
    assert results["task_hashes"][SUBTASK] == hash_string(joined)

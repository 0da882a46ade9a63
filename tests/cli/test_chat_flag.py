"""lm-eval's --apply_chat_template habit: set or dropped as the backend needs, before anything is sent."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from prb_tasks.cli.chat_flag import chat_backend, settle_chat_template
from prb_tasks.common.harness_args import parse
from prb_tasks.testing.fake_server import FakeLLMServer, always
from tests.runner import run_cli

REPO = Path(__file__).resolve().parents[2]
STARTUP = REPO / "prb_tasks" / "_startup"


@pytest.mark.parametrize("model", ["local-chat-completions", "openai-chat-completions", "litellm",
                                   "anthropic-chat-completions", "azure-openai-chat-completions"])
def test_every_chat_backend_gets_the_flag_with_a_note(model: str) -> None:
    assert chat_backend(model)
    args = parse(["--model", model, "--tasks", "personalized_rb_sample"])
    note = settle_chat_template(args, prb_tasks_only=True)
    assert args.namespace.apply_chat_template is True and args.settings["apply_chat_template"] is True
    assert note == (f"prb eval: --apply_chat_template added: {model} sends chat messages only, and prb's judge "
                    "tasks are chat prompts (lm-eval stops without the flag)")


@pytest.mark.parametrize("model", ["prb-rm", "prb-method"])
def test_prbs_scorers_drop_the_flag_with_a_note(model: str) -> None:
    args = parse(["--model", model, "--tasks", "personalized_rb_sample_scalar", "--apply_chat_template"])
    note = settle_chat_template(args, prb_tasks_only=True)
    assert not args.namespace.apply_chat_template and not args.settings["apply_chat_template"]
    assert note is not None and note.startswith(f"prb eval: --apply_chat_template ignored: {model} ")


def test_what_needs_nothing_is_left_alone() -> None:
    for argv, only_ours in ((["--model", "hf", "--tasks", "personalized_rb_sample"], True),
                            (["--model", "local-completions", "--tasks", "personalized_rb_sample"], True),
                            (["--model", "local-chat-completions", "--tasks", "personalized_rb_sample,arc_easy"],
                             False),
                            (["--model", "local-chat-completions", "--tasks", "x", "--apply_chat_template"], True),
                            (["--model", "prb-rm", "--tasks", "personalized_rb_sample_scalar"], True)):
        args = parse(argv)
        before = args.settings.get("apply_chat_template")
        assert settle_chat_template(args, only_ours) is None
        assert args.settings.get("apply_chat_template") == before
    judge = parse(["--model", "prb-judge", "--tasks", "personalized_rb_sample"])
    assert settle_chat_template(judge, True) is None and judge.namespace.apply_chat_template is True


def test_plain_lm_eval_chat_backend_without_the_flag_runs(tmp_path: Path) -> None:
    """The habit as typed: plain `lm_eval`, a chat backend, no --apply_chat_template."""
    launch = ("import _prb_lm_eval_hook, sys; sys.argv[0] = 'lm_eval'; "
              "from lm_eval.__main__ import cli_evaluate; cli_evaluate()")
    with FakeLLMServer(policy=always("A")) as server:
        proc = run_cli(["run", "--model", "local-chat-completions", "--model_args",
                        f"model=fake,base_url={server.openai_base}/chat/completions", "--tasks",
                        "personalized_rb_sample_art", "--limit", "2"], cwd=tmp_path,
                       program=[sys.executable, "-c", launch],
                       env={"PYTHONPATH": os.pathsep.join([str(REPO), str(STARTUP)]), "PRB_LM_EVAL_HOOK": "1",
                            "OPENAI_API_KEY": "sk-prb-test-0000"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("prb: --apply_chat_template added: local-chat-completions sends chat messages")
    assert "personalized_rb_sample_art" in proc.stdout


def test_prb_rm_with_the_flag_runs(tmp_path: Path) -> None:
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalized_rb_sample_scalar_art", "--limit", "2", "--apply_chat_template"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stdout.startswith("prb eval: --apply_chat_template ignored: prb-rm scores each pair itself")

"""Credentials in a URL and unknown model arguments are refused by ``prb eval`` with one
line, before lm-eval logs the model arguments (values included): no password or unchecked
value ever reaches the output (issue 33, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.judge.configs import resolve_settings
from prb_tasks.judge.errors import JudgeConfigError
from tests.runner import run_cli

SECRET = "s3cret-pw-4711"


@pytest.mark.parametrize(("model", "model_args", "expected"), [
    ("prb-judge", f"model=openai/x,api_base=http://user:{SECRET}@127.0.0.1:9/v1,api_key_env=PRB_TEST_KEY",
     "prb eval: --model_args: api_base has a user name or password in it"),
    ("prb-judge", f"model=openai/x,extra_headers=Bearer-{SECRET},api_key_env=PRB_TEST_KEY",
     "prb-judge: model_args: unknown key 'extra_headers'"),
    ("prb-rm", f"scorer=length,extra_headers=Bearer-{SECRET}", "prb-rm: unknown model_args key 'extra_headers'"),
    ("prb-rm", f"scorer=served,endpoint=https://bob:{SECRET}@rm.example",
     "prb eval: --model_args: endpoint has a user name or password"),
    ("local-chat-completions", f"model=x,base_url=https://bob:{SECRET}@h.example/v1/chat/completions",
     "prb eval: --model_args: base_url has a user name or password in it"),
])
def test_refused_before_lm_eval_logs_the_arguments(tmp_path: Path, model: str, model_args: str, expected: str) -> None:
    proc = run_cli(["eval", "--model", model, "--model_args", model_args, "--tasks", "personalized_rb_sample",
                    "--limit", "2"], cwd=tmp_path, env={"PRB_TEST_KEY": "sk-test-0123456789"})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    assert SECRET not in output  # before: lm-eval's "Initializing ... with arguments: {...}" showed it
    assert "Initializing" not in output and "Traceback" not in output
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith(expected), proc.stderr


def test_a_judge_config_with_credentials_in_api_base_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text(f"model: openai/x\napi_base: https://bob:{SECRET}@h.example/v1\n", encoding="utf-8")
    for args in ({"config": str(config)}, {"model": "openai/x", "api_base": f"http://u:{SECRET}@h/v1"}):
        with pytest.raises(JudgeConfigError) as info:
            resolve_settings(args)
        assert "api_base': has a user name or password in it" in str(info.value)
        assert SECRET not in str(info.value) and "\n" not in str(info.value)
    assert resolve_settings({"model": "openai/x", "api_base": "http://127.0.0.1:8000/v1"}).api_base  # plain URLs pass
    assert resolve_settings({"model": "openai/x", "api_base": "http://h/v1?user=a@b"}).api_base  # an @ in the query

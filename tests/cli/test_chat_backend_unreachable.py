"""lm-eval's own API backends under ``prb eval`` failing to connect: one line naming the
URL (prb-judge says the same in its own words), never lm-eval's traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.cli.evalcmd import unreachable_line
from tests.runner import closed_port, run_cli


@pytest.mark.slow
@pytest.mark.parametrize("concurrent", [1, 4])  # requests (one at a time) and aiohttp (concurrent) transports
def test_a_chat_server_that_is_down_is_one_line(tmp_path: Path, concurrent: int) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1/chat/completions"
    proc = run_cli(["eval", "--model", "local-chat-completions", "--model_args",
                    f"model=smol,base_url={url},max_retries=1,num_concurrent={concurrent}", "--apply_chat_template",
                    "--tasks", "personalized_rb_sample_art", "--limit", "2"], cwd=tmp_path,
                   env={"OPENAI_API_KEY": "sk-prb-test-0000"})
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "never retrieved" not in proc.stderr, proc.stderr[-3000:]
    line = (f"prb eval: local-chat-completions could not connect to {url} (Connection refused); check that the "
            "server is running and that base_url names it (e.g. base_url=http://127.0.0.1:8080/v1/chat/completions)")
    assert f"{line}\n" in proc.stderr, proc.stderr[-3000:]  # (lm-eval's progress bar may close after it)


def test_other_failures_are_left_alone() -> None:
    from prb_tasks.common.harness_args import HarnessArgs  # noqa: F401 - the type the line reads

    class Args:
        model = "local-chat-completions"
        model_args = {"base_url": "http://h:1/v1/chat/completions"}

    assert unreachable_line(Args(), KeyError("x")) is None  # type: ignore[arg-type]
    assert unreachable_line(None, ConnectionRefusedError(111, "refused")) is None
    judge = type("Judge", (), {"model": "prb-judge", "model_args": {}})()
    assert unreachable_line(judge, ConnectionRefusedError(111, "refused")) is None  # says it itself
    wrapped = RuntimeError("retries used up")
    wrapped.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert unreachable_line(Args(), wrapped).startswith(  # type: ignore[arg-type, union-attr]
        "prb eval: local-chat-completions could not connect to http://h:1/v1/chat/completions (Connection refused)")

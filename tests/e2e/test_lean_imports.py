"""A run through the direct transport never imports litellm, nor torch (issue 24).

The run happens in a subprocess (``python -c`` around ``prb eval``) against the fake
server; at exit the child prints whether ``litellm`` and ``torch`` are in ``sys.modules``.
The results file still describes torch's environment (computed by a child process).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from prb_tasks.judge.price_table import model_info
from prb_tasks.judge.pricing import litellm_price
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.runner import run_cli

PROBE = ("import sys, atexit\n"
         "atexit.register(lambda: print('LITELLM-LOADED' if 'litellm' in sys.modules else 'LITELLM-ABSENT'))\n"
         "atexit.register(lambda: print('TORCH-LOADED' if 'torch' in sys.modules else 'TORCH-ABSENT'))\n"
         "from prb_tasks.cli import main\n"
         "sys.exit(main(sys.argv[1:]))\n")


@pytest.mark.slow
def test_direct_run_imports_no_litellm(tmp_path: Path) -> None:
    with FakeLLMServer(record_requests=False) as server:
        # No prices given: the listed price is looked up (and found missing) in litellm's table.
        args = ["eval", "--model", "prb-judge", "--model_args",
                f"model=openai/fake,api_base={server.openai_base},cache_dir={tmp_path / 'cache'},num_concurrent=8",
                "--tasks", "personalized_rb_sample", "--limit", "4", "--output_path", str(tmp_path / "out")]
        proc = run_cli(args, cwd=tmp_path, program=[sys.executable, "-c", PROBE])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "requests sent" in proc.stdout
    assert "LITELLM-ABSENT" in proc.stdout, proc.stdout[-2000:]
    assert "TORCH-ABSENT" in proc.stdout, proc.stdout[-2000:]
    (results,) = (tmp_path / "out").rglob("results_*.json")
    assert json.loads(results.read_text())["pretty_env_info"].startswith("PyTorch version:")


def test_price_table_matches_litellm() -> None:
    import litellm

    for model in ("openai/gpt-4.1", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash", "gpt-4o-mini"):
        ours = model_info(model)
        theirs = litellm.get_model_info(model)
        assert ours is not None
        for field in ("input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
                      "max_output_tokens"):
            assert ours.get(field) == theirs.get(field), (model, field)
    assert model_info("openai/fake") is None
    # A Claude name behind the OpenAI prefix is a served model, not Anthropic's: no price.
    assert model_info("openai/claude-sonnet-4-5") is None
    price = litellm_price("openai/gpt-4.1")
    assert price is not None and price.cost(1000, 100) == 1000 * 2e-06 + 100 * 8e-06

"""What works with plain lm-eval with prb's start-up hook switched off (``PRB_LM_EVAL_HOOK=0``,
or before issue 34): our tasks load with ``--include_path``; our models do not, because
lm-eval 0.4.13 looks ``--model`` up in its own registry and reads no entry points. From
Python, :func:`prb_tasks.plugin.register_models` adds them.

(With the hook, as installed by the wheel: tests/e2e/test_install.py and tests/cli/test_lm_eval_hook.py.)

(Plain ``lm_eval`` with a built-in model on our tasks is run by
``tests/documents/test_metadata.py`` (``dummy``) and ``tests/e2e/test_tasks_end_to_end.py`` (``litellm``).)
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from prb_tasks.common.resources import tasks_dir as prb_tasks_dir
from tests.runner import run_cli


def test_python_api_runs_prb_rm_after_register_models() -> None:
    import lm_eval
    from lm_eval.tasks import TaskManager

    from prb_tasks.common.resources import tasks_dir
    from prb_tasks.plugin import register_models

    register_models()
    out = lm_eval.simple_evaluate(model="prb-rm", model_args="scorer=bm25",
                                  tasks=["personalized_rb_sample_scalar_art"],
                                  task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False))
    assert out is not None
    # The same number `prb eval --model prb-rm --model_args scorer=bm25` prints for this subset.
    assert out["results"]["personalized_rb_sample_scalar_art"]["acc,none"] == pytest.approx(8 / 12)
    assert out["config"]["model"] == "prb-rm"


@pytest.mark.slow
def test_plain_lm_eval_cli_without_the_hook_does_not_know_prb_rm(tmp_path: Path) -> None:
    beside = Path(sys.executable).parent / "lm_eval"
    lm_eval = str(beside) if beside.exists() else shutil.which("lm_eval")
    assert lm_eval
    tasks_dir = str(prb_tasks_dir())  # what `prb tasks-dir` prints, without a process
    proc = run_cli(["--include_path", tasks_dir, "--model", "prb-rm", "--model_args", "scorer=bm25",
                    "--tasks", "personalized_rb_sample_scalar_art"], cwd=tmp_path, program=[lm_eval],
                   env={"PRB_LM_EVAL_HOOK": "0"})
    assert proc.returncode != 0
    assert "Attempted to load model 'prb-rm', but no model for this name found!" in proc.stderr

"""lm-eval's environment report does not import torch for a run that never loaded it (issue 63
item 7: ~15 s at load on every run once torch was installed; 3.7 s of a 6.7 s bm25 run idle)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from prb_tasks.cli.env_info import light_env_info
from tests.runner import REPO, run_cli


def test_without_torch_loaded_the_report_imports_nothing_and_says_why(tmp_path) -> None:
    probe = ("import json, sys; from prb_tasks.cli.env_info import light_env_info; d = {}; "
             "light_env_info(lambda s: s.update(original=True))(d); "
             "print(json.dumps({'torch': 'torch' in sys.modules, 'transformers': 'transformers' in sys.modules, **d}))")
    proc = run_cli(["-c", probe], cwd=tmp_path, program=[sys.executable], env={"PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["torch"] is False and report["transformers"] is False and "original" not in report
    assert report["pretty_env_info"].startswith("torch ") and "not loaded by this run" in report["pretty_env_info"]
    assert report["transformers_version"] and report["lm_eval_version"] and "upper_git_hash" in report


def test_a_run_that_loaded_torch_gets_lm_evals_own_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or object())
    seen: list[dict[str, Any]] = []
    light_env_info(seen.append)({})
    assert seen == [{}]

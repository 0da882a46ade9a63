"""The docs' 30-line method (docs/personalization.md) runs as documented: by import path,
in-process and through `prb eval`."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from prb_tasks.fewshot import registry
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.metrics import k_curve
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.fewshot_fixture import constructed
from tests.runner import REPO, metric, read_results, run_cli


def readme_example() -> str:
    text = (REPO / "docs" / "personalization.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- fewshot-example -->\n```python\n(.*?)```", text, re.S)
    assert match, "docs/personalization.md lost its few-shot example"
    return match.group(1)


@pytest.fixture
def example_module(tmp_path: Path):
    code = readme_example()
    assert len(code.strip().splitlines()) <= 35
    (tmp_path / "my_methods.py").write_text(code, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    sys.modules.pop("my_methods", None)


def test_the_readme_method_learns_from_support_pairs(example_module: Path) -> None:
    method = registry.build("my_methods:Perceptron", {"step": 0.3})
    curve = {p.k: p.accuracy.value for p in k_curve((o.k, o.user_id, o.correct) for o in run(method, constructed()))}
    assert curve[16] > curve[0] + 0.05


@pytest.mark.slow
def test_the_readme_command_runs(example_module: Path, tmp_path: Path) -> None:
    copy = write_personalllm(tmp_path / "pllm", fixture_rows(40, seed=5))
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-method", "--model_args", "method=my_methods:Perceptron,step=0.3",
                    "--tasks", "personalllm_fewshot", "--metadata",
                    json.dumps({"data_dir": str(copy), "n_users": 12, "queries": 2}), "--output_path", str(out)],
                   cwd=example_module, env={"PYTHONPATH": "."})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert 0.0 <= metric(read_results(out), "personalllm_fewshot", "aukc") <= 1.0
    # Not a Method subclass, or a missing module: one line each.
    proc = run_cli(["eval", "--model", "prb-method", "--model_args", "method=my_methods:np", "--tasks",
                    "personalllm_fewshot"], cwd=example_module, env={"PYTHONPATH": "."})
    assert proc.returncode == 2 and "method 'my_methods:np' is not a subclass" in proc.stderr
    proc = run_cli(["eval", "--model", "prb-method", "--model_args", "method=nowhere:X", "--tasks",
                    "personalllm_fewshot"], cwd=example_module)
    assert proc.returncode == 2 and "cannot import 'nowhere'" in proc.stderr and "Traceback" not in proc.stderr

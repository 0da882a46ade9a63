"""A non-editable install into a fresh venv carries everything and runs from anywhere."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.runner import REPO, metric, read_results, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (built,) = out.glob("prb_tasks-*.whl")
    return built


def test_wheel_carries_tasks_templates_configs_and_sample(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "prb_tasks/tasks/personalized_rb/personalized_rb.yaml",
        "prb_tasks/tasks/personalized_rb/utils.py",
        "prb_tasks/templates/judge/system.jinja",
        "prb_tasks/templates/judge/user_profile.jinja",
        "prb_tasks/data/personalized_rb/sample/Art_and_Entertainment/test-00000-of-00001.jsonl",
        "prb_tasks/data/personalized_rb/sample/Society_and_Culture/test-00000-of-00001.jsonl",
        "prb_tasks/collect/default_form.yaml",  # prb collect's web app: form, pages, script
        "prb_tasks/collect/web/templates/pair.html",
        "prb_tasks/collect/web/static/collect.js",
    ):
        assert required in names, required
    assert any(n.startswith("prb_tasks/configs/") and n.endswith(".yaml") for n in names)
    # Test and benchmark tools are not part of what users run.
    assert not any(n.startswith("prb_tasks/testing/") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "prb = prb_tasks.cli:main" in text
    assert "[lm_eval.models]" in text and "prb-judge" in text and "[lm_eval.tasks]" in text


def test_fresh_venv_install_runs_readme_main_command(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The recorded versions, as CI installs them: whether the newest releases still work
    # is .ci/latest's question, and must not turn this test red overnight.
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(REPO / "constraints.txt"), str(wheel)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    out = outside / "runs"
    # The README's main command (Quick start, command 1), run from a directory outside the checkout.
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=bm25",
                    "--tasks", "personalized_rb_sample_scalar", "--output_path", str(out)],
                   cwd=outside, program=[str(env_dir / "bin" / "prb")])
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(out)
    assert 0.0 <= metric(results, "personalized_rb_sample_scalar", "acc") <= 1.0
    where = subprocess.run([str(python), "-c", "import prb_tasks; print(prb_tasks.__file__)"],
                           cwd=outside, capture_output=True, text=True).stdout
    assert str(env_dir) in where and str(REPO) not in where

"""A non-editable install into a fresh venv carries everything and runs from anywhere."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.runner import REPO, metric, read_results, run_cli
from tests.watchdog import run_watched

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = run_watched(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True,
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
    # The start-up hook for plain lm_eval sits at the root, and RECORD lists it, so
    # `pip uninstall` removes it.
    assert {"prb_lm_eval_hook.pth", "_prb_lm_eval_hook.py"} <= names
    record = next(n for n in names if n.endswith(".dist-info/RECORD"))
    listed = {line.split(",")[0] for line in zipfile.ZipFile(wheel).read(record).decode().splitlines()}
    assert {"prb_lm_eval_hook.pth", "_prb_lm_eval_hook.py"} <= listed
    assert not any(n.startswith("prb_tasks/_startup/") for n in names)


def test_fresh_venv_install_runs_readme_main_command(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The recorded versions, as CI installs them: whether the newest releases still work
    # is .ci/latest's question, and must not turn this test red overnight.
    proc = run_watched([str(python), "-m", "pip", "install", "-q", "-c", str(REPO / "constraints.txt"), str(wheel)],
                       capture_output=True, text=True)
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
    _plain_lm_eval_sees_prb(env_dir, outside)
    # Uninstalling leaves nothing of prb behind, the start-up hook included.
    proc = run_watched([str(python), "-m", "pip", "uninstall", "-y", "-q", "prb-tasks"],
                       capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True).stdout.strip())
    left = sorted(p.name for p in site.iterdir() if "prb" in p.name.lower())
    assert left == [], left
    proc = subprocess.run([str(python), "-c", "import sys; print(len(sys.meta_path))"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def _plain_lm_eval_sees_prb(env_dir: Path, cwd: Path) -> None:
    """Issue 34: after `pip install`, plain `lm_eval` lists and runs prb's tasks and models."""
    lm_eval = [str(env_dir / "bin" / "lm_eval")]
    listed = run_cli(["ls", "tasks"], cwd=cwd, program=lm_eval)
    assert listed.returncode == 0, listed.stderr[-3000:]
    for name in ("personalized_rb", "personalized_rb_sample_scalar", "personalllm", "hellaswag"):
        assert f"|{name} " in listed.stdout, name
    assert "prb:" not in listed.stderr  # the hook's one-line failure notice
    out = cwd / "plain-runs"
    proc = run_cli(["--model", "prb-rm", "--model_args", "scorer=bm25", "--tasks", "personalized_rb_sample_scalar",
                    "--output_path", str(out)], cwd=cwd, program=lm_eval)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # prb eval's compact table and legend, and the results file's prb section.
    assert "prb-rm (scorer=bm25)" in proc.stdout and "Metrics:" in proc.stdout
    assert "|    Tasks" not in proc.stdout
    results = read_results(out)
    assert 0.0 <= metric(results, "personalized_rb_sample_scalar", "acc") <= 1.0
    assert results["prb"]["data_sources"]
    # A misspelt prb task gets prb's one line with a suggestion, not lm-eval's traceback.
    proc = run_cli(["--model", "prb-rm", "--model_args", "scorer=bm25", "--tasks", "personalized_rb_sampel_scalar"],
                   cwd=cwd, program=lm_eval)
    assert proc.returncode == 2
    assert "did you mean 'personalized_rb_sample_scalar'" in proc.stderr and "Traceback" not in proc.stderr
    # Switched off, lm-eval is as it was.
    proc = run_cli(["--model", "prb-rm", "--model_args", "scorer=bm25", "--tasks", "personalized_rb_sample_scalar"],
                   cwd=cwd, program=lm_eval, env={"PRB_LM_EVAL_HOOK": "0"})
    assert proc.returncode != 0

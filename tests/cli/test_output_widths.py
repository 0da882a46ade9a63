"""Every command's default output fits a terminal 120 columns wide (issue 49, item 5).

Before: ``prb tasks`` 193 columns (41 of 43 lines over 120), ``prb eval --help`` 404, the compact
table's ``Data:`` line 210, the dry run 298, ``prb audit`` 291, ``prb compare`` 303, the
RewardBench 2 + RM-Bench legend 408, the few-shot k-curve 244 (tests/e2e/test_fewshot_e2e.py).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from prb_tasks.cli import main
from prb_tasks.common.terminal import WIDTH, fit, shown_path, wrap_line
from prb_tasks.testing.benchmark_copies import rewardbench2_rows, rmbench_rows, write_rewardbench2, write_rmbench
from tests.runner import run_cli


def over(text: str) -> list[str]:
    """The lines of ``text`` wider than a 120-column terminal."""
    return [line for line in text.splitlines() if len(line) > WIDTH]


def test_wrapping_keeps_every_word_and_hangs_under_a_legend_key():
    line = "  acc_macro: " + " ".join(f"word{i}" for i in range(60))
    wrapped = wrap_line(line)
    assert len(wrapped) > 1 and not over("\n".join(wrapped))
    assert " ".join(" ".join(wrapped).split()) == " ".join(line.split())
    assert all(part.startswith(" " * len("  acc_macro: ")) for part in wrapped[1:])
    long_word = "/a/" + "b" * 150  # a path is never split
    assert fit(f"see {long_word} here") == f"see\n  {long_word}\n  here"
    assert fit("short\n\nlines") == "short\n\nlines"


def test_a_path_under_the_working_folder_is_shown_relative_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shown_path(tmp_path / "runs" / "usage_1.json") == "runs/usage_1.json"
    assert shown_path("/elsewhere/usage_1.json") == "/elsewhere/usage_1.json"


def test_prb_tasks_and_prb_eval_help_fit(capsys):
    assert main(["tasks"]) == 0
    tasks = capsys.readouterr().out
    assert main(["eval", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "personalized_rb_sample" in tasks and "--metadata" in help_text
    # With the hook off, --include_path gives the tasks to lm-eval's own models only (not prb-judge/-rm/-method).
    assert 'or: lm_eval --include_path "$(prb tasks-dir)" ... (lm-eval\'s own models)' in tasks
    assert over(tasks) == [] and over(help_text) == []


def test_prb_audit_fits(capsys):
    assert main(["audit", "sample"]) == 0
    out = capsys.readouterr().out
    assert "question overlap: more BM25 overlap with the question" in out  # the rules, under the table
    assert over(out) == []


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="runs prb as a subprocess on /tmp paths")
def test_prb_eval_compare_and_the_dry_run_fit(tmp_path: Path):
    rb2 = write_rewardbench2(tmp_path / "rb2", rewardbench2_rows())
    rmb = write_rmbench(tmp_path / "rmb", rmbench_rows())
    env = {"PRB_REWARDBENCH2_DIR": str(rb2), "PRB_RMBENCH_DIR": str(rmb)}
    runs = tmp_path / "runs"
    printed = {}
    # bm25 reads the user's profile: prb's own scalar tasks only.
    for scorer, tasks in (("length", "personalized_rb_sample_scalar,rewardbench2,rmbench"),
                          ("bm25", "personalized_rb_sample_scalar")):
        proc = run_cli(["eval", "--model", "prb-rm", "--model_args", f"scorer={scorer}", "--tasks", tasks,
                        "--output_path", str(runs), "--log_samples"], cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        printed[f"eval {scorer}"] = proc.stdout
    assert "Data: bundled SYNTHETIC sample" in printed["eval length"] and "RM-Bench:" in printed["eval length"]
    compare = run_cli(["compare", str(runs)], cwd=tmp_path)
    assert compare.returncode == 0, compare.stderr[-3000:]
    printed["compare"] = compare.stdout
    dry = run_cli(["eval", "--model", "prb-judge", "--model_args", "model=openai/gpt-4o-mini,dry_run=true",
                   "--tasks", "personalized_rb_sample", "--output_path", str(tmp_path / "dry")],
                  cwd=tmp_path, env={"OPENAI_API_KEY": ""})
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "Provider prompt cache (estimate)" in dry.stdout
    printed["dry run"] = dry.stdout
    assert {name: over(text) for name, text in printed.items()} == {name: [] for name in printed}


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path, str]:
    """A tiny model trained by ``prb train`` with a long absolute --out and --backbone under the
    working folder: (that folder, the checkpoint, what prb train printed on stderr)."""
    pytest.importorskip("torch")
    import contextlib
    import io
    import os

    from prb_tasks.testing.tiny_rm import build_tiny_base_lm

    folder = tmp_path_factory.mktemp("train-widths")
    backbone = build_tiny_base_lm(folder / "models" / ("a-tiny-random-backbone-with-a-long-name-" + "x" * 30))
    out = folder / "runs" / "checkpoints-of-the-plain-reward-model-trained-on-the-bundled-example"
    err = io.StringIO()
    here = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stderr(err):
            code = main(["train", "example", "--architecture", "plain", "--backbone", str(backbone), "--out",
                         str(out), "--max-steps", "2", "--batch-size", "4"])
    finally:
        os.chdir(here)
    assert code == 0, err.getvalue()
    return folder, out, err.getvalue()


def _hint(err: str) -> list[str]:
    """The evaluation command ``prb train`` printed last, as its printed lines."""
    hint = err[err.index("evaluate it with"):].split("\n", 1)[1]
    return [line for line in hint.splitlines() if line.startswith("  ")]


def test_prb_train_with_long_paths_fits_and_its_hint_still_runs_as_a_shell_command(trained):
    """A long --out and --backbone (absolute, under the working folder) are shown relative to it, and the
    closing hint is broken between arguments (each line ending in a backslash), never inside one."""
    _, out, err = trained
    assert over(err) == [], err
    assert f"prb train: wrote runs/{out.name}" in " ".join(err.split())
    command = _hint(err)
    assert all(line.endswith(" \\") for line in command[:-1]) and len(command) > 2, err
    argv = shlex.split("\n".join(command).replace("\\\n", " "))
    assert argv[:4] == ["prb", "eval", "--model", "prb-method"]
    assert argv[argv.index("--model_args") + 1] == f"method=trained,checkpoint=runs/{out.name}"


@pytest.mark.skipif(sys.platform != "linux", reason="runs prb as a subprocess on /tmp paths")
def test_prb_eval_of_the_trained_model_on_a_pipe_prints_no_cursor_codes(trained):
    """The command prb train printed runs from where it was printed; its stderr, a pipe, gets no ANSI
    codes: transformers' weight-loading bar, opened under prb-method's own, moved the cursor up
    (``\\x1b[A``) to draw itself on a second line."""
    folder, _, err = trained
    argv = shlex.split("\n".join(_hint(err)).replace("\\\n", " "))
    proc = run_cli(argv[1:] + ["--output_path", "evals"], cwd=folder)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "personalized_custom_fewshot k-curve" in proc.stdout
    assert "prb-method (trained): " in proc.stderr and "\x1b[" not in proc.stderr, proc.stderr[-3000:]


def test_prb_train_help_opens_with_what_it_does_and_its_usage(capsys, monkeypatch):
    """``prb train --help`` opened with 15 lines of bracketed options and then 'context parts: demographics,
    history, profile' (issue 63): it opens with the command's shape and a paragraph saying what it does."""
    monkeypatch.setenv("COLUMNS", "120")
    with pytest.raises(SystemExit) as done:
        main(["train", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    usage, description = text.split("\n\n")[:2]
    assert usage == "usage: prb train DATA --architecture {plain,context,latent,mixture} --backbone MODEL --out DIR " \
                    "[options]"
    assert description.startswith("Train a personalization-aware reward model")
    for words in ("checkpoint", "method=trained,checkpoint=DIR", "train extra", "demographics, history, profile"):
        assert words in " ".join(description.split()), words
    assert over(text) == []

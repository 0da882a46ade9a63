"""The mistakes new users make each end in one line naming what to fix, never a traceback.

Each test runs the real command (``prb_tasks.cli.main`` in this process where nothing
is loaded yet, a ``python -m prb_tasks`` subprocess otherwise) and asserts on the
printed line and the exit status.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from prb_tasks.cli import main
from tests.runner import ctrl_c_reaches_child, run_cli
from tests.watchdog import communicate_watched, run_watched, wait_for

SAMPLE_RM = ["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_sample_scalar"]


def one_line(capsys) -> str:
    """The single line the command printed on stderr."""
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


def last_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.stderr.strip().splitlines()[-1]


# -- the command line, read by lm-eval's own parser ---------------------------------

@pytest.mark.parametrize("args, expected", [
    (["--metadata", '{"data_dir": sample}'],
     "prb eval: argument --metadata: not valid JSON (Expecting value at line 1, column 14)"),
    (["--model_args", "scorer"], "prb eval: argument --model_args: expected `key=value`, got 'scorer'"),
    (["--model_args", "{scorer: 1}"], "prb eval: argument --model_args: not valid JSON"),
    (["--limit", "ten"], "prb eval: argument --limit/-L: invalid float value: 'ten'"),
    (["--output-path", "runs"], "prb eval: unrecognized arguments: --output-path runs (did you mean '--output_path'?)"),
    (["--num_fewshot", "3"], "prb eval: --num_fewshot 3: prb tasks (personalized_rb_sample_scalar) are zero-shot"),
])
def test_command_line_mistakes(capsys, args, expected):
    assert main([*SAMPLE_RM, *args]) == 2
    assert one_line(capsys).startswith(expected)


def test_no_tasks_and_missing_task_file(capsys, tmp_path):
    assert main(["eval", "--model", "prb-rm"]) == 2
    assert one_line(capsys) == "prb eval: no tasks given; pass --tasks NAME (`prb tasks` lists prb's tasks)"
    assert main(["eval", "--model", "prb-rm", "--tasks", str(tmp_path / "mine.yaml")]) == 2
    assert one_line(capsys) == f"prb eval: --tasks {tmp_path / 'mine.yaml'}: no such file"


def test_unknown_model_gets_a_near_match(capsys):
    assert main(["eval", "--model", "prb-rmm", "--tasks", "personalized_rb_sample_scalar"]) == 2
    line = one_line(capsys)
    assert line.startswith("prb eval: unknown --model 'prb-rmm' (did you mean 'prb-rm'?); "
                           "prb's models: prb-judge, prb-rm")


def test_output_folder_that_cannot_be_written(capsys, tmp_path):
    (tmp_path / "a_file").write_text("x")
    assert main([*SAMPLE_RM, "--output_path", str(tmp_path / "a_file" / "runs")]) == 2
    line = one_line(capsys)
    assert line == (f"prb eval: cannot write results to --output_path {tmp_path / 'a_file' / 'runs'}: "
                    f"{tmp_path / 'a_file'} is a file, not a folder; choose a folder you can write to")
    assert main([*SAMPLE_RM, "--use_cache", str(tmp_path / "a_file" / "lm")]) == 2
    assert one_line(capsys).startswith(
        f"prb eval: cannot write lm-eval's cache --use_cache {tmp_path / 'a_file' / 'lm'}")


def test_model_arg_mistakes_name_the_key(tmp_path):
    from prb_tasks.rm.errors import RMError
    from prb_tasks.rm.options import parse_options

    with pytest.raises(RMError) as info:
        parse_options({"pretrained": str(tmp_path / "no-such-model")})
    assert str(info.value) == (f"prb-rm: model_args pretrained={tmp_path / 'no-such-model'} is invalid: no such "
                               "folder (a local model must be an existing folder; a hub id looks like org/name)")
    with pytest.raises(RMError, match=r"unknown model_args key 'embed_topk' \(did you mean 'embed_top_k'\?\)"):
        parse_options({"scorer": "embedding", "embed_topk": 2})
    with pytest.raises(RMError, match=r"scorer=lenght is invalid \(did you mean 'length'\?\)"):
        parse_options({"scorer": "lenght"})


@pytest.mark.parametrize("text, expected", [
    ("tasks: [personalized_rb_sample_scalar\nmodel: prb-rm\n",
     "is not valid YAML at line 2, column 6: expected ',' or ']'"),
    ("- a\n- b\n", "must be a mapping of option names to values"),
    ("model: prb-rm\ntaks: personalized_rb_sample_scalar\n",
     "unknown key 'taks' (did you mean 'tasks'?); accepted: apply_chat_template,"),
])
def test_config_file_mistakes(capsys, tmp_path, text, expected):
    config = tmp_path / "run.yaml"
    config.write_text(text, encoding="utf-8")
    assert main(["eval", "--config", str(config)]) == 2
    line = one_line(capsys)
    assert line.startswith(f"prb eval: --config {config}") and expected in line
    assert main(["eval", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert one_line(capsys) == f"prb eval: --config file {tmp_path / 'missing.yaml'} does not exist"


def test_help_starts_with_prb_section(capsys):
    assert main(["eval", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("prb eval: lm-eval's `run` command with prb's models and tasks loaded")
    head, lm_eval_help = out.split("lm-eval's options:", 1)
    for needed in ("prb-judge", "prb-rm", "model=openai/gpt-4o-mini", "scorer=bm25", "`prb tasks`",
                   "data_dir:", "max_post_chars:"):
        assert needed in head
    assert "usage: prb eval --model" in lm_eval_help and "--model_args" in lm_eval_help


def test_prb_tasks_lists_every_group_with_its_backends(capsys):
    from prb_tasks.plugin import plugin_task_names

    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    names = plugin_task_names()
    rows: dict[str, str] = {}
    last = ""
    for line in out.splitlines()[1:]:
        if line.split() and line.split()[0] in names:
            last = line.split()[0]
            rows[last] = line
        elif line.startswith(" ") and last:  # a description wrapped under its row
            rows[last] += " " + line.strip()
        else:
            last = ""
    # Every group and every task outside a group (PersonalLLM, custom data) has a row; subset tasks do not.
    # General RM benchmarks' subsets (rewardbench2_math, rmbench_chat) are members of their group too.
    general = ("rewardbench2_", "rmbench_")
    listed = {n for n in names if not n.endswith(("_art", "_lifestyle", "_society")) and not n.startswith(general)}
    assert set(rows) == listed | {"rewardbench2_judge", "rmbench_judge"}
    assert "prb-judge" in rows["rewardbench2_judge"] and "rates each response" in rows["rewardbench2_judge"]
    assert "prb-judge" in rows["rmbench_judge"] and "18 calls per prompt" in rows["rmbench_judge"]
    assert "prb-rm" in rows["personalllm_scalar"] and "Bundled example" in rows["personalized_custom_example"]
    assert "prb-judge" in rows["personalized_rb"] and "both orders" in rows["personalized_rb"]
    assert "prb-rm" in rows["personalized_rb_scalar"] and "prb-judge" not in rows["personalized_rb_scalar"]
    assert "SYNTHETIC" in rows["personalized_rb_sample"]
    assert "prb-rm = prb-rm (hf/vllm: log-likelihood reference)" in " ".join(out.split())


def test_cache_commands_on_a_file_or_a_damaged_cache(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "file")]) == 2
    assert one_line(capsys).startswith(f"prb cache: {tmp_path / 'file'} is a file, not a cache folder")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "cache.db").write_text("not sqlite")
    for action in ("info", "clear"):
        assert main(["cache", action, "--cache-dir", str(broken)]) == 2
        line = one_line(capsys)
        assert line.startswith(f"prb cache: the cache file {broken / 'cache.db'} is damaged (file is not a database)")
        assert f"mv '{broken}' '{broken}.damaged'" in line


# -- mistakes found while the run starts --------------------------------------------

def test_metadata_typo_stops_the_run(tmp_path):
    proc = run_cli([*SAMPLE_RM, "--metadata", json.dumps({"datadir": "sample"})], cwd=tmp_path)
    assert proc.returncode == 2
    # Found before the model is built (prb eval checks the keys of the requested families first).
    assert last_line(proc) == (
        "prb: unknown --metadata key 'datadir' for personalized_rb tasks (did you mean 'data_dir'?); "
        "accepted: data_dir, k, max_post_chars, plans, plans_missing, retriever, retriever_backend, "
        "retriever_device, retriever_dtype, "
        "retriever_model, rows, "
        "system_template, "
        "templates, user_template")
    assert "Initializing prb-rm model" not in proc.stderr
    sample = run_cli([*SAMPLE_RM, "--metadata", json.dumps({"data_dir": str(tmp_path)})], cwd=tmp_path)
    assert sample.returncode == 2
    assert last_line(sample).startswith(f"prb: personalized_rb_sample_scalar always reads the bundled sample, so "
                                        f"data_dir='{tmp_path}' would be ignored")


def test_errors_lm_eval_raises_while_configuring(tmp_path):
    proc = run_cli([*SAMPLE_RM, "--log_samples"], cwd=tmp_path)
    assert proc.returncode == 2
    assert last_line(proc) == "prb eval: Specify --output_path if providing --log_samples or --predict_only"


def test_task_typo_gets_a_near_match(tmp_path):
    proc = run_cli(["eval", "--model", "prb-rm", "--tasks", "personalized_rb_scalr"], cwd=tmp_path)
    assert proc.returncode == 2
    assert last_line(proc).startswith("prb eval: unknown task 'personalized_rb_scalr' "
                                      "(did you mean 'personalized_rb_scalar'")


def test_data_dir_env_var_pointing_nowhere(tmp_path):
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalar"],
                   cwd=tmp_path, env={"PRB_DATA_DIR": str(tmp_path / "nowhere")})
    assert proc.returncode == 2
    assert last_line(proc) == (f"prb: PRB_DATA_DIR points to '{tmp_path / 'nowhere'}', which is not a folder; give "
                               "the folder of a local copy in the HF layout (`prb data download` makes one), or "
                               "drop PRB_DATA_DIR to read the hub")
    assert "Initializing prb-rm model" not in proc.stderr


def test_offline_machine_fails_fast_with_advice(tmp_path):
    # No HF_HUB_OFFLINE: the loader must find out by itself that the hub is out of reach
    # (these machines have no network) instead of retrying for half a minute.
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalar"],
                   cwd=tmp_path, env={"HF_HUB_OFFLINE": "", "HF_DATASETS_OFFLINE": "", "PRB_DATA_DIR": ""})
    assert proc.returncode == 2
    line = last_line(proc)
    assert line.startswith("prb: cannot load QiyaoMa/Personalized-RewardBench from the HF hub: ")
    assert "Initializing prb-rm model" not in proc.stderr  # before the model is built
    assert "prb data download DIR" in line and "PRB_DATA_DIR" in line
    # The slow path is huggingface_hub's retries, each logged as "Retrying in Ns": none ran. (No
    # wall-clock bound: a loaded machine takes longer than those retries just to start prb.)
    assert "Retrying" not in proc.stderr


# -- Ctrl-C --------------------------------------------------------------------------

def _start(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    full = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1", **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "prb_tasks", *args], cwd=cwd, env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_reaches_child, start_new_session=True)


def _ctrl_c(proc: subprocess.Popen) -> None:
    """What a terminal's Ctrl-C does: SIGINT to the whole process group (anything the run started
    gets it too, as in a shell), not only to the process the test started."""
    os.killpg(proc.pid, signal.SIGINT)


def _wait_until(condition, proc: subprocess.Popen) -> None:
    try:
        wait_for(condition, proc, "the condition")  # progress-based: no wall-clock limit
    except AssertionError:
        if proc.poll() is not None:
            pytest.fail(f"process ended early: {proc.communicate()[1][-3000:]}")
        raise


GATE_HOOK = """
import faulthandler
import os

import prb_tasks.data.rawfiles as rawfiles

_read = rawfiles.json_lines_at


def _gated(*args, **kwargs):
    with open(os.environ["PRB_TEST_GATE"], "rb") as gate:  # a named pipe: blocks until the test
        # The test sends Ctrl-C once the gate is open. It hung once in CI (cause not found): a run
        # still alive 300 s later prints every thread's stack to stderr, which the test's failure
        # shows. It is not ended here: whether it is hung is the watchdog's call (no CPU and no
        # output), never a wall-clock limit a slow machine could reach.
        faulthandler.dump_traceback_later(300, exit=False)
        gate.read()  # opens it, then until the test closes it again (after the Ctrl-C)
    return _read(*args, **kwargs)


rawfiles.json_lines_at = _gated
"""


def test_ctrl_c_while_loading_data(tmp_path):
    # The loader blocks while reading the data file until we interrupt: a named pipe in
    # front of the read (a FIFO as the data file itself is refused before any read).
    folder = tmp_path / "data" / "Art_and_Entertainment"
    folder.mkdir(parents=True)
    (folder / "test-00000-of-00001.jsonl").write_text("{}\n", encoding="utf-8")
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(GATE_HOOK, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH", "")) if p)
    proc = _start(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalar",
                   "--metadata", json.dumps({"data_dir": str(tmp_path / "data")})], tmp_path,
                  env={"PYTHONPATH": path, "PRB_TEST_GATE": str(fifo)})
    writer: list[int] = []

    def reader_is_in() -> bool:
        try:
            writer.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO until the loader has opened the gate
            return False
        return True

    try:
        _wait_until(reader_is_in, proc)
        _ctrl_c(proc)
        out, err = communicate_watched(proc)
    finally:
        for fd in writer:
            os.close(fd)
    assert proc.returncode == 130, err[-6000:]
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("prb: interrupted (Ctrl-C) before results were written")


@pytest.mark.slow
def test_ctrl_c_during_scoring_then_resume(tmp_path):
    from tests.rm.test_rm_served import FakeRMServer

    server = FakeRMServer()
    server.hang = " "  # every response has a space: each request takes 1.5 s
    cache = tmp_path / "scores"
    args = ["eval", "--model", "prb-rm", "--model_args",
            f"endpoint={server.url},num_concurrent=1,cache_dir={cache}",
            "--tasks", "personalized_rb_sample_scalar"]
    try:
        proc = _start(args, tmp_path)
        _wait_until(lambda: len(server.requests) >= 3, proc)
        _ctrl_c(proc)
        _, err = communicate_watched(proc)
        assert proc.returncode == 130
        assert "Traceback" not in err
        line = err.strip().splitlines()[-1]
        assert line.startswith("prb-rm: interrupted (Ctrl-C); ") and line.endswith(
            "re-run the same command to resume"), line
        saved = int(line.split("; ")[1].split(" of ")[0])
        first = [r["body"]["messages"][-1]["content"] for r in server.requests]
        assert 1 <= saved < len(first)
        # Nothing more was sent after Ctrl-C: at most the request in flight and one whose
        # reply had arrived but was not yet recorded are missing from the saved scores.
        assert len(first) <= saved + 2

        server.hang = None
        server.requests.clear()
        done = run_cli(args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        again = [r["body"]["messages"][-1]["content"] for r in server.requests]
        assert len(again) == 72 - saved
        assert len(set(again) & set(first)) == len(first) - saved  # only requests without a saved score
    finally:
        server.close()


def test_judge_config_and_model_arg_typos_get_a_near_match():
    from prb_tasks.judge.configs import load_config, resolve_settings
    from prb_tasks.judge.errors import JudgeConfigError

    with pytest.raises(JudgeConfigError, match=r"unknown judge config 'gpt4o-mini' \(did you mean 'gpt-4o-mini'"):
        load_config("gpt4o-mini")
    with pytest.raises(JudgeConfigError, match=r"unknown key 'num_concurent' \(did you mean 'num_concurrent'\?\)"):
        resolve_settings({"model": "openai/x", "num_concurent": 4})


def test_a_task_typo_is_said_before_a_missing_key(tmp_path):
    # Both are mistakes; the typo comes first so that exporting the key is not followed by a second error.
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = run_watched([sys.executable, "-m", "prb_tasks", "eval", "--model", "prb-judge", "--model_args",
                        "model=openai/gpt-4.1-mini", "--tasks", "rmbench_judg"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert "unknown task 'rmbench_judg'" in proc.stderr and "rmbench_judge" in proc.stderr
    assert "OPENAI_API_KEY" not in proc.stderr

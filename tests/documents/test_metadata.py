"""--metadata keys are checked per task family; --model_args keys are told apart."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from prb_tasks.common import harness_args
from prb_tasks.common.resources import tasks_dir as prb_tasks_dir
from prb_tasks.documents.metadata import MetadataError, MetadataSpec, check_options
from prb_tasks.documents.personalized_rb import METADATA, build_docs
from tests.runner import run_cli

SPEC = MetadataSpec("toy", {"data_dir": "x", "k": "y", "max_post_chars": "z"}, fixed=frozenset({"subset"}))


@pytest.fixture
def declared():
    """Declare a parsed command line, as ``prb eval`` does; undeclare afterwards."""
    def _declare(*argv: str) -> None:
        harness_args.declare(harness_args.parse(["--model", "hf", "--tasks", "x", *argv]))

    yield _declare
    harness_args.declare(None)


@pytest.mark.parametrize("typo, near", [("datadir", "data_dir"), ("K", "k"), ("max_posts_chars", "max_post_chars")])
def test_near_misses_name_the_key_and_the_accepted_ones(declared, typo, near):
    declared("--metadata", json.dumps({typo: 1}))
    with pytest.raises(MetadataError) as info:
        check_options(SPEC, {typo: 1, "version": 1.0, "config_source": "/t/task_a.yaml"}, "task_a")
    assert str(info.value) == (f"prb: unknown --metadata key '{typo}' for task_a (did you mean '{near}'?); "
                               "accepted: data_dir, k, max_post_chars")


def test_model_args_keys_are_not_metadata(declared):
    # lm-eval hands --model_args keys to the loader too; with the command line known
    # they are told apart exactly, even a far-off unknown --metadata key is refused.
    declared("--model_args", "pretrained=gpt2,dtype=float32,kk=3", "--metadata", json.dumps({"k": 2}))
    assert check_options(SPEC, {"pretrained": "gpt2", "dtype": "float32", "kk": 3, "k": 2, "subset": "a"}) == {"k": 2}
    declared("--metadata", json.dumps({"colour": "blue"}))
    with pytest.raises(MetadataError, match="unknown --metadata key 'colour' for toy tasks; accepted"):
        check_options(SPEC, {"colour": "blue"})


def test_config_file_metadata_counts_as_metadata(declared, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("tasks: x\nmetadata:\n  datadir: sample\nmodel_args: pretrained=gpt2\n", encoding="utf-8")
    declared("--config", str(config))
    with pytest.raises(MetadataError, match="'datadir'.*did you mean 'data_dir'"):
        check_options(SPEC, {"datadir": "sample", "pretrained": "gpt2"})


def test_without_a_command_line_only_near_misses_are_refused(monkeypatch):
    # lm-eval's Python API: the origin of a key cannot be known.
    monkeypatch.setattr(sys, "argv", ["my_script.py"])
    assert harness_args.current() is None
    assert check_options(SPEC, {"pretrained": "gpt2", "k": 4}) == {"k": 4}
    with pytest.raises(MetadataError, match="did you mean 'data_dir'"):
        check_options(SPEC, {"datadir": "x"})


def test_plain_lm_eval_command_line_is_read_too(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/lm_eval", "run", "--model", "hf", "--model_args", "colour=1",
                                      "--metadata", '{"k": 1}', "--tasks", "x"])
    run = harness_args.current()
    assert run is not None and run.model_arg_keys == {"colour"} and run.metadata_keys == {"k"}
    assert check_options(SPEC, {"colour": 1, "k": 1}) == {"k": 1}


def test_sample_tasks_refuse_a_data_dir(declared):
    declared("--metadata", json.dumps({"data_dir": "/my/copy"}))
    with pytest.raises(MetadataError) as info:
        build_docs("art", "scalar", source="sample", data_dir="/my/copy",
                   config_source="/x/personalized_rb_sample_scalar_art.yaml")
    assert str(info.value).startswith("prb: personalized_rb_sample_scalar_art always reads the bundled sample, "
                                      "so data_dir='/my/copy' would be ignored; run the same variant without")
    assert build_docs("art", "scalar", source="sample", data_dir="sample")  # consistent: fine


def test_every_family_declares_its_keys():
    from prb_tasks.documents.metadata import all_specs

    assert METADATA in all_specs()
    assert set(METADATA.keys) == {"data_dir", "k", "max_post_chars", "retriever", "retriever_device", "retriever_dtype",
                                  "retriever_backend", "retriever_model", "plans", "plans_missing", "templates",
                                  "system_template", "user_template", "rows"}


@pytest.mark.slow
def test_plain_lm_eval_rejects_metadata_typos_but_not_model_args(tmp_path):
    beside = Path(sys.executable).parent / "lm_eval"
    lm_eval = str(beside) if beside.exists() else shutil.which("lm_eval")
    assert lm_eval
    tasks_dir = str(prb_tasks_dir())  # what `prb tasks-dir` prints, without a process
    base = ["--include_path", tasks_dir, "--model", "dummy", "--tasks", "personalized_rb_sample_scalar_art"]
    ok = run_cli([*base, "--model_args", "colour=1", "--limit", "2"], cwd=tmp_path, program=[lm_eval])
    assert ok.returncode == 0, ok.stderr[-3000:]
    bad = run_cli([*base, "--metadata", json.dumps({"K": 3})], cwd=tmp_path, program=[lm_eval])
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1].endswith(
        "prb: unknown --metadata key 'K' for personalized_rb_sample_scalar_art (did you mean 'k'?); "
        "accepted: data_dir, k, max_post_chars, plans, plans_missing, retriever, retriever_backend, "
        "retriever_device, retriever_dtype, "
        "retriever_model, rows, system_template, "
        "templates, user_template")


def test_a_family_with_a_pydantic_options_model(declared):
    from typing import Optional

    from pydantic import BaseModel, Field

    class Options(BaseModel):
        data_dir: Optional[str] = Field(None, description="where the data is")
        n_users: int = Field(1000, description="simulated users")

    spec = MetadataSpec.from_options("family_x", Options, fixed=frozenset({"variant"}))
    assert spec.keys == {"data_dir": "where the data is", "n_users": "simulated users"}
    declared("--metadata", json.dumps({"n_user": 5}))
    with pytest.raises(MetadataError, match="'n_user' for family_x tasks \\(did you mean 'n_users'\\?\\); "
                                            "accepted: data_dir, n_users"):
        check_options(spec, {"n_user": 5, "variant": "judge"})

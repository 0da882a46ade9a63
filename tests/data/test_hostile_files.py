"""Hostile files where data or a config should be: a folder in a data file's place, a
data file that is a symbolic link to itself, JSON nested 200,000 deep, a judge config
nested 100,000 deep. Each is one line naming the file (exit status 2 from ``prb eval``),
never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.cli.datatools import validate
from prb_tasks.data.custom.reader import read_users
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.sources import load_rows
from prb_tasks.data.personalized_rb.subsets import subset_by_name
from prb_tasks.data.personalllm.sources import load_prompts
from prb_tasks.judge.configs import load_config
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.conftest import FILE, write_layout
from tests.runner import run_cli

ART = subset_by_name("art")
DEEP_JSON = "[" * 200_000 + "]" * 200_000


def one_line(info: pytest.ExceptionInfo) -> str:
    text = str(info.value)
    assert "\n" not in text, text
    return text


def last_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-2000:]
    return [line for line in stderr.splitlines() if line.strip()][-1]


@pytest.fixture
def prb_copy(tmp_path: Path, all_sample_rows: dict) -> Path:
    write_layout(tmp_path / "copy", all_sample_rows, "jsonl")
    return tmp_path / "copy"


def art_file(root: Path) -> Path:
    return root / ART.config / f"{FILE}.jsonl"


def test_a_folder_in_place_of_a_data_file(prb_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = art_file(prb_copy)
    path.unlink()
    path.mkdir()
    with pytest.raises(DataError) as info:
        load_rows(ART, str(prb_copy))
    assert one_line(info) == (f"prb: data file {path} is a folder, not a file; put the file there or remove "
                              "the folder")
    assert validate(prb_copy) == 1
    out = capsys.readouterr().out
    # The reason under its row is wrapped to 120 columns.
    assert f"prb: data file {path} is a folder, not a file" in " ".join(out.split()) and "Traceback" not in out
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalar",
                    "--metadata", json.dumps({"data_dir": str(prb_copy)})], cwd=prb_copy.parent)
    assert proc.returncode == 2 and last_line(proc.stderr).startswith(f"prb: data file {path} is a folder")


def test_a_data_file_that_links_to_itself(prb_copy: Path, tmp_path: Path) -> None:
    path = art_file(prb_copy)
    path.unlink()
    path.symlink_to(path.name)
    with pytest.raises(DataError) as info:
        load_rows(ART, str(prb_copy))
    assert one_line(info).startswith(f"prb: data file {path} is a symbolic link that leads back to itself")
    personalllm = write_personalllm(tmp_path / "pl", fixture_rows())
    parquet = personalllm / "data" / "test-00000-of-00001.parquet"
    parquet.unlink()
    parquet.symlink_to(parquet.name)
    with pytest.raises(DataError) as info:
        load_prompts(str(personalllm))
    assert one_line(info).startswith(f"prb: data file {parquet} is a symbolic link that leads back to itself")
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalllm_scalar",
                    "--metadata", json.dumps({"data_dir": str(personalllm)})], cwd=tmp_path)
    assert proc.returncode == 2 and last_line(proc.stderr).startswith(f"prb: data file {parquet} is a symbolic link")


def test_a_personalllm_folder_in_place_of_its_parquet_file(tmp_path: Path) -> None:
    personalllm = write_personalllm(tmp_path / "pl", fixture_rows())
    parquet = personalllm / "data" / "test-00000-of-00001.parquet"
    parquet.unlink()
    parquet.mkdir()
    with pytest.raises(DataError) as info:
        load_prompts(str(personalllm))
    assert one_line(info).startswith(f"prb: data file {parquet} is a folder, not a file")


def test_json_nested_200000_deep(prb_copy: Path, tmp_path: Path) -> None:
    path = art_file(prb_copy)
    path.write_text(DEEP_JSON + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_rows(ART, str(prb_copy))
    assert one_line(info).startswith(f"prb: {path} line 1 is nested too deeply to read")
    for name in ("deep.jsonl", "deep.json"):
        custom = tmp_path / name
        custom.write_text(DEEP_JSON + "\n", encoding="utf-8")
        with pytest.raises(DataError) as info:
            read_users(custom)
        assert one_line(info).startswith(f"prb: {custom}{' line 1' if name.endswith('l') else ''} is nested too deeply")
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalized_custom_scalar", "--metadata", json.dumps({"data_path": str(tmp_path / "deep.json")})],
                   cwd=tmp_path)
    assert proc.returncode == 2 and "is nested too deeply to read" in last_line(proc.stderr)


def test_yaml_nested_100000_deep(tmp_path: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text("model: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(JudgeConfigError) as info:
        load_config(str(config))
    assert one_line(info).startswith(f"prb-judge: judge config {config} is nested too deeply to read")
    proc = run_cli(["eval", "--model", "prb-judge", "--model_args", f"config={config}", "--tasks",
                    "personalized_rb_sample"], cwd=tmp_path)
    assert proc.returncode == 2 and last_line(proc.stderr).startswith("prb-judge: judge config")
    harness = run_cli(["eval", "--config", str(config)], cwd=tmp_path)
    assert harness.returncode == 2 and last_line(harness.stderr).startswith(f"prb eval: --config {config} is nested")

"""Bad files a user may hand us give one line naming the file and what to do (issue 14, item 6):
bytes that are not UTF-8 in data, templates, judge configs and logged samples; tags a user
template cannot use; errors raised while a template renders."""

from __future__ import annotations

import json

import pytest

from prb_tasks.cli.datatools import validate
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.sources import load_rows
from prb_tasks.data.personalized_rb.subsets import subset_by_name
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.judge.configs import load_config
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.prompts.templates import TemplateProblem, render, resolve
from prb_tasks.report.runs import load_runs
from tests.conftest import FILE, write_layout
from tests.runner import run_cli

ART = subset_by_name("art")
LATIN1 = "Caf\u00e9 cr\u00e8me".encode("latin-1")  # valid Latin-1, invalid UTF-8


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text, text
    return text


def test_data_file_that_is_not_utf8_names_file_line_and_byte(tmp_path, all_sample_rows):
    write_layout(tmp_path, all_sample_rows, "jsonl")
    path = tmp_path / ART.config / f"{FILE}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"question": "', b'"question": "' + LATIN1, 1)
    path.write_bytes(b"".join(lines))
    with pytest.raises(DataError) as info:
        load_rows(ART, str(tmp_path))
    text = _one_line(info)
    assert str(path) in text and "line 3" in text and "0xe9" in text and "UTF-8" in text


def test_validate_command_reports_a_non_utf8_file_in_one_line(tmp_path, all_sample_rows, capsys):
    write_layout(tmp_path, all_sample_rows, "jsonl")
    path = tmp_path / ART.config / f"{FILE}.jsonl"
    path.write_bytes(b"\xff\xfe" + path.read_bytes())  # a UTF-16 byte-order mark glued on
    assert validate(tmp_path) == 1
    out = capsys.readouterr().out
    assert "is not UTF-8 text (line 1, byte 1: 0xff)" in out
    assert "Traceback" not in out


def test_utf8_byte_order_mark_is_accepted(tmp_path, all_sample_rows):
    write_layout(tmp_path, all_sample_rows, "jsonl")
    path = tmp_path / ART.config / f"{FILE}.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert len(load_rows(ART, str(tmp_path))) == len(all_sample_rows[ART.config])


def test_template_that_is_not_utf8(tmp_path):
    user = tmp_path / "user.jinja"
    user.write_bytes(b"Question:\n" + LATIN1 + b" {{ question }}\n")
    with pytest.raises(TemplateProblem) as info:
        build_docs("art", "both", data_dir="sample", user_template=str(user))
    text = _one_line(info)
    assert str(user) in text and "line 2, byte 4: 0xe9" in text and "save it with UTF-8" in text


def test_judge_config_that_is_not_utf8(tmp_path):
    config = tmp_path / "judge.yaml"
    config.write_bytes(b"model: openai/gpt-4o-mini\n# " + LATIN1 + b"\n")
    with pytest.raises(JudgeConfigError) as info:
        load_config(str(config))
    text = _one_line(info)
    assert str(config) in text and "line 2" in text and "UTF-8" in text


@pytest.mark.parametrize(
    "tag, name",
    [('{% include "other.jinja" %}', "include"), ('{% import "m.jinja" as m %}', "import"),
     ('{% from "m.jinja" import x %}', "from ... import"), ('{% extends "base.jinja" %}', "extends")],
)
def test_include_import_extends_are_refused_in_one_line(tmp_path, tag, name):
    (tmp_path / "other.jinja").write_text("shared", encoding="utf-8")
    user = tmp_path / "user.jinja"
    user.write_text(f"Q: {{{{ question }}}}\n{tag}\n", encoding="utf-8")
    with pytest.raises(TemplateProblem) as info:
        render(resolve("judge/user.jinja", override=str(user)), question="q")
    text = _one_line(info)
    assert f"{user}:2 uses {{% {name} %}}" in text and "paste" in text


@pytest.mark.parametrize(
    "body, expected",
    [("{% for i in range(10000000) %}{% endfor %}", r"range\(\) of 10,000,000 items \(limit 100,000\)"),
     ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
     ("{{ 10.0 ** 400 }}", "OverflowError"),
     ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
     ("{{ 'abc' + 1 }}", "TypeError"),
     ("{{ question.__class__ }}", "unsafe")],
)
def test_errors_while_rendering_name_file_and_line(tmp_path, body, expected):
    user = tmp_path / "user.jinja"
    user.write_text("Question: {{ question }}\n" + body + "\n", encoding="utf-8")
    with pytest.raises(TemplateProblem, match=expected) as info:
        render(resolve("judge/user.jinja", override=str(user)), question="q")
    assert f"{user}:2" in _one_line(info)


def test_compare_with_broken_samples_file(tmp_path):
    results = tmp_path / "results_2026-01-01T00-00-00.json"
    results.write_text(json.dumps({"group_subtasks": {"personalized_rb": ["personalized_rb_art"]},
                                   "results": {}, "config": {"model": "x"}}), encoding="utf-8")
    samples = tmp_path / "samples_personalized_rb_art_2026-01-01T00-00-00.jsonl"
    samples.write_bytes(b'{"doc": {}}\n{"doc": "' + LATIN1 + b'"}\n')
    # A broken samples file skips that run with one line naming the file and the line.
    notes: list[str] = []
    assert load_runs([tmp_path], notes) == []
    assert len(notes) == 1 and f"{samples}" in notes[0] and "line 2" in notes[0] and "\n" not in notes[0], notes
    samples.write_text('{"doc": {}}\n{"doc": \n', encoding="utf-8")
    notes = []
    assert load_runs([tmp_path], notes) == []
    assert len(notes) == 1 and "line 2, column 9: not valid JSON" in notes[0], notes
    # Nested too deeply for Python's parser: one line too, not a RecursionError.
    samples.write_text('{"doc": {}}\n' + "[" * 200_000 + "]" * 200_000 + "\n", encoding="utf-8")
    notes = []
    assert load_runs([tmp_path], notes) == []
    assert len(notes) == 1 and "line 2 is nested too deeply to read" in notes[0], notes
    samples.write_text('{"doc": {}}\n[1]\n', encoding="utf-8")
    notes = []
    assert load_runs([tmp_path], notes) == []
    assert len(notes) == 1 and "line 2 is not an lm-eval sample" in notes[0], notes


def test_cli_prints_one_line_for_a_bad_template_and_bad_metadata_json(tmp_path):
    user = tmp_path / "user.jinja"
    user.write_bytes(b"{{ question }} " + LATIN1)
    done = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalized_rb_scalar_profile", "--metadata",
                    json.dumps({"data_dir": "sample", "user_template": str(user)})], cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"prb: template {user} is not UTF-8 text")
    done = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalized_rb_sample_scalar", "--metadata", "{data_dir: sample}"], cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("prb eval: argument --metadata: not valid JSON")

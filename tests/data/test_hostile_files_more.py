"""More hostile files (issue 33, item 7): a 100,000-digit integer in a data row, a
non-UTF-8 ``.json`` user file, a user template 100,000 parentheses deep, a data file that
is a link to ``/dev/zero`` or a named pipe (FIFO), and results files that are empty, not
UTF-8, a JSON list or 200,000 levels deep. Each is one line (exit status 2 from the
commands), never a traceback or a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prb_tasks.data.custom.reader import read_users
from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.sources import load_rows
from prb_tasks.data.rawfiles import check_file
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.prompts.templates import TemplateProblem
from tests.data.test_hostile_files import ART, DEEP_JSON, art_file, last_line, one_line, prb_copy  # noqa: F401
from tests.runner import run_cli

HUGE = "9" * 100_000
HANG = 1800.0  # seconds: the old code never returned (or ate all memory); the fixed one takes seconds
EXAMPLE = Path(__file__).resolve().parents[2] / "prb_tasks" / "data" / "custom" / "example.jsonl"


def a_user() -> dict:
    return json.loads(EXAMPLE.read_text(encoding="utf-8").splitlines()[0])


def test_a_100000_digit_integer_in_a_data_row(prb_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    path = art_file(prb_copy)
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"extra": ' + HUGE + "}\n")
    with pytest.raises(DataError) as info:
        load_rows(ART, str(prb_copy))
    assert "line" in one_line(info) and "holds a number too long to read" in one_line(info)
    row = json.dumps(a_user())[:-1] + ', "extra": ' + HUGE + "}"
    for name, text in (("huge.jsonl", row + "\n"), ("huge.json", "[" + row + "]")):
        custom = tmp_path / name
        custom.write_text(text, encoding="utf-8")
        with pytest.raises(DataError) as info:
            read_users(custom)
        assert one_line(info).startswith(f"prb: {custom}") and "number too long to read" in one_line(info)
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalized_custom_scalar", "--metadata", json.dumps({"data_path": str(tmp_path / "huge.json")})],
                   cwd=tmp_path)
    assert proc.returncode == 2 and "number too long to read" in last_line(proc.stderr)


def test_a_json_user_file_that_is_not_utf8(tmp_path: Path) -> None:
    custom = tmp_path / "latin1.json"
    custom.write_bytes(json.dumps([a_user()], ensure_ascii=False).encode("utf-8").replace(b"[", b"[\xe9", 1))
    with pytest.raises(DataError) as info:
        read_users(custom)
    assert one_line(info) == (f"prb: data file {custom} is not UTF-8 text (line 1, byte 2: 0xe9); "
                              "save it with UTF-8 encoding")
    proc = run_cli(["data", "validate", str(custom)], cwd=tmp_path)
    assert proc.returncode != 0 and "is not UTF-8 text" in last_line(proc.stdout + proc.stderr)


def test_a_user_template_100000_parentheses_deep(tmp_path: Path) -> None:
    user = tmp_path / "deep.jinja"
    user.write_text("{{ " + "(" * 100_000 + "question" + ")" * 100_000 + " }}", encoding="utf-8")
    with pytest.raises(TemplateProblem) as info:
        build_docs("art", "both", data_dir="sample", user_template=str(user))
    assert one_line(info).startswith(f"prb: template {user} is nested too deeply to read")
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalized_rb_scalar_profile", "--metadata",
                    json.dumps({"data_dir": "sample", "user_template": str(user)})], cwd=tmp_path)
    assert proc.returncode == 2 and last_line(proc.stderr).startswith(f"prb: template {user} is nested too deeply")


@pytest.mark.parametrize("kind", ["dev_zero", "fifo"])
def test_a_data_file_that_is_a_link_to_dev_zero_or_a_fifo(prb_copy: Path, tmp_path: Path, kind: str) -> None:  # noqa: F811
    if kind == "dev_zero" and not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    path = art_file(prb_copy)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
        expected = f"prb: data file {path} is a named pipe (FIFO), not a regular file"
    else:
        path.symlink_to("/dev/zero")
        expected = f"prb: data file {path} is a character device (a link to /dev/zero), not a regular file"
    # In subprocesses first: before, both blocked in open() for ever (FIFO) or read zeros until
    # memory ran out (/dev/zero); the watchdog ends them (no CPU for its stall time, or its
    # ceiling: a bound far beyond the second or two these runs take, never a speed limit).
    proc = run_cli(["data", "validate", str(prb_copy)], cwd=tmp_path, ceiling=HANG)
    # The reason under its row is wrapped to 120 columns.
    assert proc.returncode == 1 and expected in " ".join(proc.stdout.split())
    assert "Traceback" not in proc.stdout + proc.stderr
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_scalar",
                    "--metadata", json.dumps({"data_dir": str(prb_copy)})], cwd=tmp_path, ceiling=HANG)
    assert proc.returncode == 2 and last_line(proc.stderr).startswith(expected)
    with pytest.raises(DataError) as info:
        load_rows(ART, str(prb_copy))
    assert one_line(info).startswith(expected)


def test_a_data_file_beyond_any_sane_size_is_refused_before_reading(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import prb_tasks.data.rawfiles as rawfiles

    path = tmp_path / "data.jsonl"
    path.write_text("{}\n" * 1000, encoding="utf-8")
    monkeypatch.setattr(rawfiles, "MAX_DATA_FILE_BYTES", 1024)
    with pytest.raises(DataError, match=r"more than any data file should be \(limit 1 KiB\)"):
        check_file(path)


@pytest.mark.parametrize(("content", "expected"), [
    (b"", "not valid JSON"),
    (b'{"results": "\xff"}', "not valid JSON"),
    (b"[1, 2]", "not an lm-eval results file (a JSON list, not an object)"),
    (DEEP_JSON.encode(), "nested too deeply to read"),
])
def test_validity_and_compare_on_malformed_results_files(tmp_path: Path, content: bytes, expected: str) -> None:
    results = tmp_path / "results_2026-01-01T00-00-00.json"
    results.write_bytes(content)
    proc = run_cli(["validity", str(results)], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-2000:]
    assert proc.stderr.startswith(f"prb validity: skipped {results}: ") and expected in proc.stderr
    if content.startswith(b"[["):
        proc = run_cli(["compare", str(results)], cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"skipped {results}: it is nested too deeply to read" in proc.stderr

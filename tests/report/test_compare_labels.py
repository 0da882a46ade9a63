"""Runs that differ in a result-changing argument get different labels and folders, and
``prb compare --label`` / ``--names`` rename a run in every output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.cli.outputs import folder_name
from prb_tasks.report.build import build_report
from prb_tasks.report.names import read_names
from prb_tasks.report.runlabel import run_label
from tests.report_fixture import write_run
from tests.runner import run_cli


def test_protocol_changes_label_and_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tinyrm").mkdir()
    official, clean = "pretrained=./tinyrm,protocol=official", "pretrained=./tinyrm,protocol=clean"
    assert folder_name("prb-rm", official) == "prb-rm__tinyrm__protocol-official"
    assert folder_name("prb-rm", clean) == "prb-rm__tinyrm"  # clean is the default: the plain name
    assert run_label("prb-rm", official) == "prb-rm (pretrained=./tinyrm, protocol=official)"
    assert run_label("prb-rm", clean) == "prb-rm (pretrained=./tinyrm)"
    # What only changes how the run goes stays out; what changes verdicts goes in.
    judge = "model=openai/gpt-4o-mini,temperature=0.7,num_concurrent=4,api_key_env=K,cache_dir=/c,max_cost=2"
    assert run_label("prb-judge", judge) == "prb-judge (model=openai/gpt-4o-mini, temperature=0.7)"
    assert folder_name("prb-judge", judge) == "openai__gpt-4o-mini__temperature-0.7"
    assert folder_name("prb-judge", "model=openai/gpt-4o-mini,num_concurrent=4") is None  # lm-eval's own
    # Limits that stop a run never change an answer given: one judge, one label.
    bounded = "model=openai/gpt-4o-mini,stop_after_timeouts=3,stop_after_silence=5"
    assert run_label("prb-judge", bounded) == "prb-judge (model=openai/gpt-4o-mini)"
    assert run_label("prb-method", "method=lowrank,method_time_limit=30") == "prb-method (method=lowrank)"


def test_server_and_generation_settings_are_in_the_label() -> None:
    from prb_tasks.report.runlabel import short_url

    args = "model=openai/smol,api_base=http://user:pw@gpu-box:8080/v1/,max_tokens=64"
    assert run_label("prb-judge", args) == "prb-judge (model=openai/smol, api_base=gpu-box:8080/v1, max_tokens=64)"
    assert run_label("prb-judge", args.replace("max_tokens=64", "max_tokens=512")) != run_label("prb-judge", args)
    chat = "model=smol,base_url=http://127.0.0.1:8080/v1/chat/completions"
    assert run_label("local-chat-completions", chat, "max_gen_toks=64,temperature=0") == (
        "local-chat-completions (model=smol, base_url=127.0.0.1:8080/v1/chat/completions, max_gen_toks=64, "
        "temperature=0)")
    assert run_label("local-chat-completions", chat, {"max_gen_toks": 64}) != run_label("local-chat-completions", chat)
    # Folders: generation settings yes; the server no (plans and re-runs are found where they were).
    assert folder_name("prb-judge", "model=openai/smol,api_base=http://gpu-box:8080/v1", "max_gen_toks=64") == (
        "openai__smol__max_gen_toks-64")
    assert folder_name("prb-judge", "model=openai/smol,api_base=http://gpu-box:8080/v1") is None
    assert folder_name("prb-judge", "model=openai/smol,max_tokens=64") == "openai__smol__max_tokens-64"
    assert short_url("https://k:s@h:1/p/") == "h:1/p" and short_url("h:1") == "h:1"


def test_two_protocols_are_two_models_in_the_report(tmp_path: Path) -> None:
    ok = lambda key: True  # noqa: E731
    half = lambda key: int(key.split("/")[1]) % 2 == 0  # noqa: E731
    write_run(tmp_path / "a", "personalized_rb_sample_scalar", "prb-rm",
              {"pretrained": "./tinyrm", "protocol": "official"}, ok)
    write_run(tmp_path / "b", "personalized_rb_sample_scalar", "prb-rm",
              {"pretrained": "./tinyrm", "protocol": "clean"}, half)
    (section,) = build_report([tmp_path]).sections
    assert sorted(e.label for e in section.entries) == ["prb-rm (pretrained=./tinyrm)",
                                                        "prb-rm (pretrained=./tinyrm, protocol=official)"]


def test_label_renames_in_every_output(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "judge", "personalized_rb_sample", "prb-judge", {"model": "openai/gpt-4o-mini"},
              lambda key: True, usd=0.02)
    write_run(runs / "rm", "personalized_rb_sample_scalar", "prb-rm", {"scorer": "length"},
              lambda key: key.endswith(("0", "2", "4")))
    names = tmp_path / "names.txt"
    names.write_text("# names for the paper\nprb-rm (scorer=length)=Length baseline\n", encoding="utf-8")
    out = tmp_path / "report"
    proc = run_cli(["compare", str(runs), "--out", str(out), "--label", f"{runs / 'judge'}=GPT-4o mini (ours)",
                    "--names", str(names)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    texts = {
        "terminal": proc.stdout,
        "report.md": (out / "report.md").read_text(encoding="utf-8"),
        "report.json": json.dumps(json.loads((out / "report.json").read_text(encoding="utf-8")), ensure_ascii=False),
        "report.html": (out / "report.html").read_text(encoding="utf-8"),
    }
    svgs = sorted(out.glob("*.svg"))
    assert svgs
    texts.update({svg.name: svg.read_text(encoding="utf-8") for svg in svgs if "accuracy" in svg.name})
    for where, text in texts.items():
        assert "GPT-4o mini (ours)" in text, where
        assert "Length baseline" in text, where
        assert "openai/gpt-4o-mini" not in text and "scorer=length" not in text, where
    # A RUN that matches nothing is a one-line user error.
    bad = run_cli(["compare", str(runs), "--label", "runs/nothing=X"], cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "prb compare: --label runs/nothing=X: no run matches 'runs/nothing'; give a run folder, its results file "
        "or the label prb compare shows"]


def test_names_file_syntax_errors_name_the_line(tmp_path: Path) -> None:
    names = tmp_path / "n.txt"
    names.write_text("a=b\n\njust a name\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"--names .*n.txt line 3: expected RUN=NAME"):
        read_names([], names)


def test_both_orders_and_official_runs_of_one_judge_are_two_rows(tmp_path: Path) -> None:
    judge = {"model": "openai/smol"}
    write_run(tmp_path / "both", "personalized_rb", "prb-judge", judge, lambda key: True)
    write_run(tmp_path / "official", "personalized_rb_official", "prb-judge", judge, lambda key: False)
    (section,) = build_report([tmp_path]).sections
    assert sorted(e.label for e in section.entries) == ["prb-judge (model=openai/smol) [personalized_rb]",
                                                        "prb-judge (model=openai/smol) [personalized_rb_official]"]

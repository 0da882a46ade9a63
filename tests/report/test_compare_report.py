"""``prb compare`` end to end: two judges and one RM evaluated with ``prb eval`` on the
bundled sample (judges against the local fake server), then compared from the folders."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.fake_server import FakeLLMServer, Message, always, prefer_texts
from tests.conftest import sample_rows
from tests.runner import run_cli

KEY = "sk-compare-SECRET-77f1"
PAIRS = 36


def judge_policy() -> Any:
    """``openai/always-a`` always answers A; any other model picks the chosen response."""
    rows = [r for s in SUBSETS for r in sample_rows(s.config)]
    good = prefer_texts([r["chosen"] for r in rows], [r["rejected"] for r in rows])
    lazy = always("A")

    def policy(messages: list[Message], model: str) -> str:
        return lazy(messages, model) if "always-a" in model else good(messages, model)

    return policy


def judge_args(server: FakeLLMServer, model: str, cache: Path) -> str:
    return (f"model=openai/{model},api_base={server.openai_base},api_key_env=PRB_TEST_KEY,cache_dir={cache},"
            "input_cost_per_mtok=2.5,output_cost_per_mtok=10")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/{good,always_a,length}: real lm-eval output folders with sample logs."""
    root = tmp_path_factory.mktemp("compare")
    out = root / "runs"
    with FakeLLMServer(judge_policy(), record_requests=False) as server:
        for name, model in (("good", "good-judge"), ("always_a", "always-a")):
            proc = run_cli(["eval", "--model", "prb-judge", "--model_args", judge_args(server, model, root / "cache"),
                            "--tasks", "personalized_rb_sample", "--output_path", str(out / name), "--log_samples"],
                           cwd=root, env={"PRB_TEST_KEY": KEY})
            assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "personalized_rb_sample_scalar", "--output_path", str(out / "length"), "--log_samples"], cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def compare_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    proc = run_cli(["compare", *args], cwd=cwd)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def models_by_label(section: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Judges by their model name, the RM by its full label."""
    return {m["label"].removeprefix("prb-judge (model=openai/").split(",")[0].removesuffix(")")
            if m["kind"] == "judge" else m["label"]: m for m in section["models"]}


def test_report_over_two_judges_and_an_rm(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    proc = compare_cli([str(runs), "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    # The terminal table: one section, ranked, the perfect judge significantly first.
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("personalized_rb, question only, on the bundled synthetic sample: "
                               "3 model(s), 36 of 36 pairs")
    first = next(line for line in lines if line.startswith("1 "))
    assert "good-judge" in first and "100.0" in first and "#2, #3" in first
    assert "wrote" in proc.stderr and "report.html" in proc.stderr

    data = json.loads((out / "report.json").read_text())
    assert data["method"]["correction"] == "Holm"
    (section,) = data["sections"]
    assert section["pairs_shared_by_all"] == PAIRS
    m = models_by_label(section)
    good, lazy, rm = m["good-judge"], m["always-a"], m["prb-rm (scorer=length)"]
    assert (good["kind"], lazy["kind"], rm["kind"]) == ("judge", "judge", "scalar")
    assert good["pairs"] == lazy["pairs"] == rm["pairs"] == PAIRS
    assert good["acc"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    # Always "A": right in exactly one order of every pair, so every pair scores 1/2.
    assert lazy["acc"] == {"value": 0.5, "low": 0.5, "high": 0.5}
    assert lazy["metrics"]["pos_a_rate"] == 1.0 and lazy["metrics"]["consistency"] == 0.0
    assert (lazy["metrics"]["acc_pos_a"], lazy["metrics"]["acc_pos_b"], lazy["metrics"]["pos_bias"]) == (1.0, 0.0, 1.0)
    assert good["metrics"]["acc_pair"] == 1.0 and good["metrics"]["parse_fail"] == 0.0
    # The double game: every pair of the always-A judge nets 0, the good judge's +2.
    assert good["double_game"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert lazy["double_game"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert [g["acc"] for g in lazy["double_game_subsets"]] == [0.0] * len(SUBSETS)
    assert rm["double_game"] is None
    # No user ids in Personalized RewardBench: pairs are resampled, and the report says so.
    assert good["resampled"] == rm["resampled"] == f"{PAIRS} pairs" and good["acc_user"] is None
    # The sample is length-balanced: the length scorer always picks the longer one and
    # is right exactly when chosen is longer.
    assert rm["acc"]["value"] == 0.5 and rm["acc"]["low"] < 0.5 < rm["acc"]["high"]
    assert rm["metrics"]["picks_longer"] == 1.0
    assert (rm["metrics"]["acc_chosen_longer"], rm["metrics"]["acc_chosen_shorter"]) == (1.0, 0.0)
    assert good["metrics"]["picks_longer"] == 0.5
    assert {g["value"] for g in rm["subsets"]} == {s.config for s in SUBSETS}
    assert sum(g["pairs"] for g in good["breakdowns"]["category"]) == PAIRS
    # Cost from the usage files: priced judges have a cost per 1,000 pairs, the RM none.
    assert good["cost"]["usd_per_1k_pairs"] > 0 and lazy["cost"]["usd_per_1k_pairs"] > 0
    assert rm["cost"]["usd_per_1k_pairs"] is None
    assert good["cost"]["input_tokens_per_call"] > 100

    comparisons = {(c["first"], c["second"]): c for c in section["comparisons"]}
    ids = {name: m[name]["id"] for name in m}

    def between(a: str, b: str) -> dict[str, Any]:
        return comparisons.get((ids[a], ids[b])) or comparisons[(ids[b], ids[a])]

    vs_lazy = between("good-judge", "always-a")
    assert vs_lazy["shared"] == PAIRS and {vs_lazy["first_better"], vs_lazy["second_better"]} == {PAIRS, 0}
    assert vs_lazy["p_value"] == pytest.approx(2 * 0.5 ** PAIRS) and vs_lazy["significant"]
    lazy_vs_rm = between("always-a", "prb-rm (scorer=length)")
    assert (lazy_vs_rm["first_better"], lazy_vs_rm["second_better"]) == (18, 18)
    assert lazy_vs_rm["p_value"] == 1.0 and not lazy_vs_rm["significant"]
    assert [r["id"] for r in section["ranking"]][0] == ids["good-judge"]
    kappa = section["kappa"]["matrix"]
    assert all(kappa[i][i] == 1.0 for i in range(3))

    # The other files.
    md = (out / "report.md").read_text()
    assert "## personalized_rb, question only, on the bundled synthetic sample" in md and "Holm" in md
    assert "**Double-game score %" in md and f"| {PAIRS} pairs |" in md
    html = (out / "report.html").read_text()
    assert html.startswith("<!doctype html>") and "http://" not in html.split("<body>")[1].split("prb-data")[0]
    pngs = sorted(out.glob("*.png"))
    if importlib.util.find_spec("matplotlib") is None:
        assert not pngs and "charts skipped: matplotlib is not installed" in proc.stderr
    else:
        kinds = sorted(p.name.rsplit("_", 1)[-1] for p in pngs)
        assert kinds == ["accuracy.png", "consistency.png", "cost.png", "length.png", "subsets.png"]
        assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000 for p in pngs)
        # Every chart also as vector files; the page embeds the SVG (crisp at any width).
        assert all(p.with_suffix(".svg").is_file() and p.with_suffix(".pdf").is_file() for p in pngs)
        assert html.count("data:image/svg+xml;base64,") >= len(pngs) and "data:image/png;base64," not in html
    for path in out.iterdir():
        assert KEY.encode() not in path.read_bytes(), path


def test_task_filter_format_and_broken_pipe(runs: Path, tmp_path: Path) -> None:
    judges_only = compare_cli([str(runs), "--task", "personalized_rb_sample", "--format", "json"], tmp_path)
    (section,) = json.loads(judges_only.stdout)["sections"]
    assert len(section["models"]) == 3  # the name also matches its _scalar twin
    scalar_only = compare_cli([str(runs), "--task", "personalized_rb_sample_scalar", "--format", "markdown"], tmp_path)
    assert scalar_only.stdout.startswith("# prb compare") and "good-judge" not in scalar_only.stdout
    wrong = compare_cli([str(runs), "--task", "personalized_rb_smaple"], tmp_path)
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines() == [
        "prb compare: no runs of personalized_rb_smaple under the given folders; "
        "found: personalized_rb_sample, personalized_rb_sample_scalar"]
    # `prb compare --format json | head -c 100`: the closed pipe ends it quietly.
    env_cmd = [sys.executable, "-m", "prb_tasks", "compare", str(runs), "--format", "json"]
    proc = subprocess.run(" ".join(env_cmd) + " | head -c 100", shell=True, cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert proc.stdout.startswith("{") and len(proc.stdout) == 100
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_runs_without_logs_and_broken_folders_get_one_line_each(runs: Path, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed"
    shutil.copytree(runs / "good", mixed / "good")
    # As lm-eval writes it without --log_samples: results only.
    shutil.copytree(runs / "length", mixed / "nolog")
    for f in (mixed / "nolog").rglob("samples_*.jsonl"):
        f.unlink()
    # Killed while writing: a results file cut in half, a samples file cut mid-line.
    shutil.copytree(runs / "always_a", mixed / "cut_samples")
    victim = sorted((mixed / "cut_samples").rglob("samples_*society*.jsonl"))[0]
    victim.write_text(victim.read_text()[:-500])
    broken = mixed / "cut_results" / "x"
    broken.mkdir(parents=True)
    good_results = next((runs / "good").rglob("results_*.json")).read_text()
    (broken / "results_2026-01-01T00-00-00.000000.json").write_text(good_results[: len(good_results) // 2])
    (mixed / "cut_results" / "other.json").write_text("{}")  # not a results file: ignored

    proc = compare_cli([str(mixed), "--out", str(tmp_path / "report")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.startswith("prb compare:")]
    assert len(notes) == 3, proc.stderr
    assert any("no sample logs" in n and "re-run it with --log_samples" in n and "scorer=length" in n for n in notes)
    assert any("line" in n and "not valid JSON" in n and "half-written? re-run that evaluation" in n
               and "cut_samples" in n for n in notes)
    assert any("not valid JSON" in n and "cut_results" in n for n in notes)
    # The run without logs still shows its results-file numbers, without an interval.
    (section,) = json.loads((tmp_path / "report" / "report.json").read_text())["sections"]
    nolog = next(m for m in section["models"] if not m["logged"])
    assert nolog["acc"]["value"] == 0.5 and nolog["acc"]["low"] is None and nolog["pairs"] is None
    assert len(section["comparisons"]) == 0  # one logged model: nothing to compare


def test_command_line_mistakes(tmp_path: Path) -> None:
    proc = compare_cli([str(tmp_path / "missing")], tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "does not exist" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = compare_cli([str(tmp_path / "empty"), "--out", str(tmp_path / "r")], tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"prb compare: no finished runs of prb tasks under {tmp_path / 'empty'}; run prb eval with "
        "--output_path DIR --log_samples and give DIR"]
    assert not (tmp_path / "r").exists()
    proc = compare_cli([str(tmp_path / "empty"), "--format", "yaml"], tmp_path)
    assert proc.returncode == 2 and "invalid choice: 'yaml'" in proc.stderr


def test_only_runs_that_are_not_pairwise_is_said_so(tmp_path: Path) -> None:
    from tests.report_fixture import write_run

    # Two finished runs whose documents are not pairs (three responses: best-of-N's shape).
    for name in ("a", "b"):
        write_run(tmp_path / "runs" / name, "personalized_rb_sample", "prb-judge", {"model": "openai/j"},
                  lambda key: True, pairs=3)
        for samples in (tmp_path / "runs" / name).glob("samples_*.jsonl"):
            rows = [json.loads(line) for line in samples.read_text().splitlines()]
            for row in rows:
                row["doc"]["choices"] = ["x", "y", "z"]
            samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = compare_cli([str(tmp_path / "runs")], tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == ""
    assert sum("not a task of pairwise verdicts or scores" in line for line in lines) == 2, lines
    assert lines[-1] == (f"prb compare: the 2 finished runs of prb tasks under {tmp_path / 'runs'} are not pairwise "
                         "(above); compare reads pairwise verdicts and scores: for best-of-N runs use prb bon or "
                         "prb validity")

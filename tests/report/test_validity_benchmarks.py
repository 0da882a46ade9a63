"""``prb validity`` across benchmarks: published scores, several benchmarks against one downstream,
the difference tests, the one-line errors, and the chart."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from prb_tasks.cli import main
from prb_tasks.report.published_scores import read_scores
from prb_tasks.report.validity_benchmarks import cross_validity
from prb_tasks.stats.correlation import spearman, williams

GAINS = [0.05, 0.10, 0.20, 0.25, 0.30, 0.45, 0.50, 0.60]
#: rewardbench2 follows the gains closely, published "other" not at all.
RB2 = [0.30, 0.35, 0.33, 0.45, 0.50, 0.48, 0.62, 0.70]
OTHER = [71.0, 40.0, 66.0, 52.0, 80.0, 45.0, 58.0, 49.0]


def write_runs(root: Path, gains: list[float] = GAINS, rb2: list[float] | None = RB2) -> Path:
    """One results file per model: a PersonalLLM Best-of-N run (samples logged) and, unless
    ``rb2`` is None, the rewardbench2 group's score in the same file."""
    for i, gain in enumerate(gains):
        folder = root / f"rm-{i}"
        folder.mkdir(parents=True)
        stamp = f"2026-11-26T00-00-0{i}"
        results = {"personalllm_bon": {"alias": "personalllm_bon", "bon_reward_n8,none": 0.5}}
        if rb2 is not None:
            results["rewardbench2"] = {"alias": "rewardbench2", "score,none": rb2[i]}
        (folder / f"results_{stamp}.json").write_text(json.dumps({
            "config": {"model": "prb-rm", "model_args": f"pretrained=org/rm-{i}"},
            "results": results,
            "configs": {"personalllm_bon": {"task": "personalllm_bon", "dataset_kwargs": {"variant": "bon"},
                                            "output_type": "multiple_choice"}},
        }), encoding="utf-8")
        lines = []
        for user in range(4):
            rewards = [0.1 * user] + [0.0] * 7
            lines.append(json.dumps({"doc_id": user, "doc": {"variant": "bon", "user_id": f"user{user:04d}",
                                     "group_key": f"user{user:04d}/p0", "user_rewards": rewards},
                                     "bon_reward_n8": 0.1 * user + gain}))
        (folder / f"samples_personalllm_bon_{stamp}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def write_scores(path: Path, rows: list[tuple[str, float]], fmt: str = "csv") -> Path:
    if fmt == "csv":
        path.write_text("model,other\n" + "".join(f"{n},{v}\n" for n, v in rows), encoding="utf-8")
    else:
        path.write_text(json.dumps({n: {"other": v} for n, v in rows}), encoding="utf-8")
    return path


def test_williams_matches_a_hand_computed_value() -> None:
    # Steiger (1980)'s worked setting: r12 = .5, r13 = .3, r23 = .4, n = 103 (df 100).
    t, p = williams(0.5, 0.3, 0.4, 103)
    det = 1 - 0.25 - 0.09 - 0.16 + 2 * 0.5 * 0.3 * 0.4
    expected = 0.2 * math.sqrt(102 * 1.4 / (2 * 102 / 100 * det + (0.8 ** 2 / 4) * 0.6 ** 3))
    assert t == pytest.approx(expected) and 0.01 < p < 0.05
    assert williams(0.5, 0.3, 0.4, 3) is None


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_two_benchmarks_against_one_downstream(tmp_path: Path, fmt: str) -> None:
    runs = write_runs(tmp_path / "runs")
    # Names as a leaderboard writes them: the pretrained id, or its last part.
    names = [f"org/rm-{i}" if i % 2 else f"rm-{i}" for i in range(len(GAINS))]
    scores = read_scores(write_scores(tmp_path / f"s.{fmt}", list(zip(names, OTHER)), fmt))
    report = cross_validity([runs], scores, ["rewardbench2"], iters=500)
    assert [c.label for c in report.contestants] == [f"prb-rm (pretrained=org/rm-{i})" for i in range(8)]
    assert [c.gain for c in report.contestants] == pytest.approx(GAINS)
    rb2, other = report.benchmarks
    assert (rb2.name, other.name) == ("rewardbench2", "other")
    assert rb2.estimates["spearman"].value == pytest.approx(spearman(RB2, GAINS))
    assert other.estimates["spearman"].value == pytest.approx(spearman(OTHER, GAINS))
    assert rb2.estimates["spearman"].by_questions is None  # aggregates: resampled over models only
    (pair,) = report.pairs
    diff = pair.differences["spearman"]
    assert diff.value == pytest.approx(spearman(RB2, GAINS) - spearman(OTHER, GAINS))
    assert diff.interval is not None and diff.interval.low <= diff.value <= diff.interval.high
    assert diff.williams_p is not None and 0 <= diff.williams_p <= 1
    assert pair.differences["ndcg"].williams_t is None  # Williams' test is for correlations only
    assert "on these 8 models" in pair.verdict or "cannot tell" in pair.verdict or "mixed" in pair.verdict


def test_identical_benchmarks_cannot_be_told_apart(tmp_path: Path) -> None:
    runs = write_runs(tmp_path / "runs")
    scores = read_scores(write_scores(tmp_path / "s.csv", [(f"rm-{i}", 100 * v) for i, v in enumerate(RB2)]))
    report = cross_validity([runs], scores, ["rewardbench2"], iters=300)
    diff = report.pairs[0].differences["spearman"]
    assert diff.value == pytest.approx(0.0) and diff.p_bootstrap == 1.0
    assert "cannot tell rewardbench2 and other apart" in report.pairs[0].verdict


def test_cli_prints_tables_and_writes_the_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = write_runs(tmp_path / "runs")
    scores = write_scores(tmp_path / "s.csv", [(f"rm-{i}", v) for i, v in enumerate(OTHER)])
    out = tmp_path / "out"
    assert main(["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(scores),
                 "--out", str(out), "--iters", "200"]) == 0
    printed = capsys.readouterr().out
    assert "every correlation below rests on these 8 models" in printed
    assert "rewardbench2 - other" in printed and "Williams" in printed
    for ext in ("html", "md", "json", "svg", "pdf", "png"):
        assert (out / f"validity_benchmarks.{ext}").stat().st_size > 0, ext
    saved = json.loads((out / "validity_benchmarks.json").read_text(encoding="utf-8"))
    assert saved["n_models"] == 8 and [b["name"] for b in saved["benchmarks"]] == ["rewardbench2", "other"]
    assert 'src="validity_benchmarks.png"' in (out / "validity_benchmarks.html").read_text(encoding="utf-8")


def _errors(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[str]:
    assert main(argv) == 2
    return capsys.readouterr().err.strip().splitlines()


def test_bad_scores_files_are_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = write_runs(tmp_path / "runs")
    bad = tmp_path / "bad.csv"
    bad.write_text("model,other\nrm-0,1\nrm-1,x\nrm-0,3\nrm-9,4\nnobody,5\n", encoding="utf-8")
    lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(bad)])
    assert lines[0] == f"prb validity: --scores {bad} line 3: the other score of 'rm-1' is not a number (got 'x')"
    assert lines[1].startswith(f"prb validity: --scores {bad} line 4: model 'rm-0' is listed twice (first at line 2)")
    assert len(lines) == 2  # the file is checked first; names are matched once it reads cleanly

    unknown = write_scores(tmp_path / "u.csv", [(f"rm-{i}", v) for i, v in enumerate(OTHER[:7])] + [("rm-9", 1.0),
                                                                                                     ("nobody", 2.0)])
    lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(unknown)])
    assert any("model 'rm-9' matches no contestant (did you mean" in line for line in lines), lines
    assert any("model 'nobody' matches no contestant" in line for line in lines), lines
    # rm-7 has no published score: the benchmarks are on different model sets.
    assert any(line.startswith("prb validity: benchmark other (--scores u.csv) has no score for 1 of 8 contestants "
                               "(prb-rm (pretrained=org/rm-7))") for line in lines), lines
    assert len(lines) == 3 and all(line.startswith("prb validity: ") for line in lines)


def test_benchmarks_on_different_model_sets_and_other_mistakes(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    runs = write_runs(tmp_path / "runs")
    (next((runs / "rm-3").glob("results_*.json"))).write_text(json.dumps({
        "config": {"model": "prb-rm", "model_args": "pretrained=org/rm-3"},
        "results": {"personalllm_bon": {"bon_reward_n8,none": 0.5}},
        "configs": {"personalllm_bon": {"task": "personalllm_bon", "dataset_kwargs": {"variant": "bon"}}},
    }), encoding="utf-8")
    lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--compare-with", "rmbench"])
    assert lines[0].startswith("prb validity: benchmark rewardbench2 (runs) has no score for 1 of 8 contestants "
                               "(prb-rm (pretrained=org/rm-3))")
    assert lines[1].startswith("prb validity: --compare-with rmbench: no run under these folders reports it")
    assert len(lines) == 2
    only = _errors(capsys, ["validity", str(write_runs(tmp_path / "r2")), "--compare-with", "rewardbench2"])
    assert only == ["prb validity: comparing benchmarks needs two or more; found 1 (rewardbench2); add "
                    "--compare-with TASK or --scores FILE"]
    for text, expected in (("{", "is not valid JSON"), ('{"rm-0": 5}', "expected an object of model ->"),
                           ("name;other\n", "the header must start with 'model'")):
        path = tmp_path / ("x.json" if text.startswith("{") else "x.csv")
        path.write_text(text, encoding="utf-8")
        got = _errors(capsys, ["validity", str(runs), "--scores", str(path)])
        assert len(got) == 1 and expected in got[0], got
    assert _errors(capsys, ["validity", str(runs), "--scores", str(tmp_path / "missing.csv")])[0].startswith(
        "prb: cannot read scores file")


def test_names_from_a_scores_file_are_escaped_in_the_markdown(tmp_path: Path) -> None:
    # Issue 48 item 6: a benchmark named <script>... in the scores file landed raw in
    # validity_benchmarks.md (headers, verdicts), while the HTML report escaped it.
    runs = write_runs(tmp_path / "runs")
    name = "<script>alert(1)</script>|x"
    scores = tmp_path / "s.json"
    scores.write_text(json.dumps({f"rm-{i}": {name: v} for i, v in enumerate(OTHER)}), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(scores),
                 "--out", str(out), "--iters", "100"]) == 0
    text = (out / "validity_benchmarks.md").read_text(encoding="utf-8")
    assert "<script" not in text and "</script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|x" in text  # in the model table's header, not a column break
    assert "rewardbench2 - &lt;script&gt;" in text  # the pair's row and verdict
    assert "<script" not in (out / "validity_benchmarks.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("huge.csv", "model,other\n" + "".join(f"rm-{i},{(-1) ** i * 1e308}\n" for i in range(8)),
     "line 2: the other score of 'rm-0' is 1e+308, beyond any benchmark's scale"),
    ("deep.json", '{"rm-0": ' + "[" * 100_000 + "]" * 100_000 + "}", "is nested too deeply to read"),
    ("list.json", "[1, 2]", "expected an object of model -> "),
    ("lists.json", "[[]]", "expected an object of model -> "),
    ("inner.json", '{"rm-0": [["other", 1]]}', "expected an object of model -> "),
    ("digits.json", '{"rm-0": {"other": ' + "9" * 5000 + "}}", "holds a number too long to read"),
    ("cell.csv", "model,other\nrm-0," + "1" * 200_000 + "\n", "line 2: cannot read it as CSV (field larger"),
])
def test_hostile_scores_files_are_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                                content: str, expected: str) -> None:
    # Issue 48 item 3: each of these ended in a traceback.
    runs = write_runs(tmp_path / "runs")
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(path)])
    assert expected in lines[0] and str(path) in lines[0], lines
    assert all(line.startswith("prb validity: --scores ") for line in lines), lines
    assert len(lines) == (8 if name == "huge.csv" else 1), lines


def test_a_fifo_a_device_and_an_oversized_file_are_refused_before_reading(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 48 item 3: a FIFO hung for ever, /dev/zero took 7.6 GB before a MemoryError.
    import os

    import prb_tasks.report.published_scores as published

    runs = write_runs(tmp_path / "runs")
    fifo = tmp_path / "scores.csv"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a named pipe (FIFO)"), (Path("/dev/zero"), "a character device")):
        lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(path)])
        assert lines == [f"prb: scores file {path} is {kind}, not a regular file; put the scores file itself there"]
    big = write_scores(tmp_path / "big.csv", [(f"rm-{i}", v) for i, v in enumerate(OTHER)])
    monkeypatch.setattr(published, "MAX_SCORES_FILE_BYTES", 64)
    lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(big)])
    assert len(lines) == 1 and "more than any scores file should be (limit 64 B)" in lines[0], lines


def test_many_unmatched_names_are_summarised_after_the_first_few(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 48 item 3: 10^6 unmatched names printed 10^6 lines.
    runs = write_runs(tmp_path / "runs")
    rows = [(f"rm-{i}", v) for i, v in enumerate(OTHER)] + [(f"leaderboard-{i}", 50.0) for i in range(20_000)]
    path = write_scores(tmp_path / "s.csv", rows)
    lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(path)])
    assert [line.split("'")[1] for line in lines[:5]] == [f"leaderboard-{i}" for i in range(5)]
    assert lines[5] == (f"prb validity: --scores {path}: 19,995 more models match no contestant (the next: "
                        "'leaderboard-5'); rows for models you did not run are not needed: remove them")
    assert len(lines) == 6


def test_many_problems_in_a_scores_file_are_summarised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = write_runs(tmp_path / "runs")
    path = tmp_path / "s.csv"
    path.write_text("model,other\n" + "".join(f"m{i},x\n" for i in range(500)), encoding="utf-8")
    lines = _errors(capsys, ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(path)])
    assert len(lines) == 21 and lines[-1] == "prb validity: ... and 480 more problems in the scores file", lines[-3:]


def test_compare_with_output_fits_120_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``prb validity --compare-with`` printed lines of up to 299 columns (issue 63, item 10): the sentences
    are wrapped by words, the wide benchmark table is shown in parts that each repeat its first column."""
    from prb_tasks.common.terminal import WIDTH

    runs = write_runs(tmp_path / "runs")
    name = "RewardBench-2-official-leaderboard-score"
    scores = tmp_path / "published_leaderboard_scores_2026.csv"
    scores.write_text(f"model,{name}\n" + "".join(f"rm-{i},{v}\n" for i, v in enumerate(OTHER)), encoding="utf-8")
    assert main(["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(scores),
                 "--iters", "200"]) == 0
    printed = capsys.readouterr()
    wide = [line for line in (printed.out + printed.err).splitlines() if len(line) > WIDTH]
    assert wide == []
    flat = " ".join(printed.out.split())
    assert f"rewardbench2 predicts the downstream ranking better than {name}" in flat \
        or f"cannot tell rewardbench2 and {name} apart" in flat or "mixed" in flat
    assert "intervals over models only; rewardbench2 in" in " ".join(printed.err.split())
    # Every part of the benchmark table names its rows: each benchmark's line in each part.
    heads = [line for line in printed.out.splitlines() if line.startswith("benchmark ")]
    assert len(heads) >= 2 and all(h.split()[0] == "benchmark" for h in heads)
    assert sum(line.startswith(f"{name} ") for line in printed.out.splitlines()) == len(heads)
    for measure in ("spearman", "kendall", "pearson", "ndcg", "rbo", "scores from"):
        assert sum(measure in h for h in heads) >= 1, measure


def test_compare_with_long_model_names_keep_their_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Long model names (a server's address among the arguments) left no room beside them: the model
    table's header was broken by words (``model`` alone on a line, the benchmark's name under it). The
    names are shortened as ``prb compare`` shortens them, and every part of the table keeps its header."""
    from prb_tasks.common.terminal import WIDTH

    runs = write_runs(tmp_path / "runs")
    for path in runs.rglob("results_*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["config"]["model_args"] += (",api_base=http://my-judge-server.internal.example.com:8000/v1,"
                                         "batch_size=16,max_length=4096")
        path.write_text(json.dumps(data), encoding="utf-8")
    name = "RewardBench-2-official-leaderboard-score"
    scores = tmp_path / "scores.csv"
    scores.write_text(f"model,{name}\n" + "".join(f"rm-{i},{v}\n" for i, v in enumerate(OTHER)), encoding="utf-8")
    assert main(["validity", str(runs), "--compare-with", "rewardbench2", "--scores", str(scores),
                 "--iters", "200"]) == 0
    printed = capsys.readouterr()
    assert [line for line in (printed.out + printed.err).splitlines() if len(line) > WIDTH] == []
    lines = printed.out.splitlines()
    heads = [line for line in lines if line.split()[:2] == ["#", "model"]]
    assert len(heads) >= 1 and "model" not in [line.strip() for line in lines]
    shown = " ".join(heads)
    assert "downstream gain" in shown and "rewardbench2" in shown and name in shown
    for i, score in enumerate(OTHER):
        (row,) = [line for line in lines if line.startswith(f"{i + 1} ") and f"org/rm-{i}," in line
                  and line.rstrip().endswith(f"{score:.1f}")]
        assert "my-judge-server" in row

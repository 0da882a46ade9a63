"""A RewardBench 2 Ties score below 0 (allenai's formula reaches -1%) gets a line under
``prb eval``'s table saying what it is made of (:mod:`prb_tasks.scoring.negative_ties`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.scoring.negative_ties import negative_ties_lines
from prb_tasks.scoring.rewardbench2 import ties_score
from prb_tasks.testing.benchmark_copies import rewardbench2_rows, write_rewardbench2
from tests.runner import read_results, run_cli


def test_allenais_formula_reaches_minus_one_percent() -> None:
    """Every part 0 and the correct answers tied (spread 0) below an incorrect one: tanh(-inf) = -1."""
    got = ties_score([("ref:0", 1, (1.0, 5.0)), ("tied:0", 2, (1.0, 1.0, 5.0))])
    assert got.score == pytest.approx(-0.01) and got.margin_score == -1.0


def test_only_negative_ties_scores_get_a_line() -> None:
    results = {"results": {
        "rewardbench2_ties": {"score,none": -0.01, "ties_tied_acc,none": 0.0, "ties_ref_acc,none": 0.0,
                              "ties_correctness_preferred,none": 0.0, "ties_correctness_preferred_hard,none": 0.0,
                              "ties_margin_score,none": -1.0},
        "rewardbench2_judge_ties": {"score,none": 0.0},
        "rewardbench2_math": {"score,none": 0.25},
        "rewardbench2": {"score,none": -0.5}}}  # not a Ties row: left alone
    assert negative_ties_lines(results) == [
        "prb: rewardbench2_ties: score -1.0% is below 0, as allenai's Ties formula allows (down to -1%) (tied "
        "accuracy 0%, ref accuracy 0%, margin share 0%, hard margin share 0%; 0.01 margin term -1.00): incorrect "
        "answers outscore the correct ones, by more than the correct ones differ among themselves"]


@pytest.mark.slow
def test_a_negative_ties_score_is_explained_under_the_table(tmp_path: Path) -> None:
    """scorer=length on Ties rows whose correct answers are short and equally long: allenai's -0.01."""
    rows = [r for r in rewardbench2_rows(1, 2, seed=1) if r["subset"] == "Ties"]
    for row in rows:
        row["chosen"] = ["red"] * len(row["chosen"])
        row["rejected"] = ["a much longer wrong answer"] * len(row["rejected"])
    data = write_rewardbench2(tmp_path / "rb2", rows)
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "rewardbench2_ties",
                    "--metadata", json.dumps({"data_dir": str(data)}), "--output_path", str(tmp_path / "out")],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert read_results(tmp_path / "out")["results"]["rewardbench2_ties"]["score,none"] == pytest.approx(-0.01)
    assert "prb: rewardbench2_ties: score -1.0% is below 0, as allenai's Ties formula allows" in proc.stdout, \
        proc.stdout

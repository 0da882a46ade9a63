"""PRISM's and Community Alignment's tasks end to end through ``prb eval`` on a copy in the hub layout: a judge through
``prb-judge`` against the local fake server, a scalar RM through a ``prb-rm`` baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.documents import community_alignment, prism
from prb_tasks.testing.fake_server import Message
from tests.community_alignment_fixture import write_ca
from tests.prism_fixture import many_rows, write_prism
from tests.runner import metric, read_results, run_cli, run_fake_judge

pytestmark = pytest.mark.slow  # whole prb eval runs in subprocesses


def test_profile_judge_and_scalar_rm(tmp_path: Path) -> None:
    copy = write_prism(tmp_path / "prism")
    meta = json.dumps({"data_dir": str(copy)})
    # The fake judge is right on user0001's pairs and wrong on user0002's.
    answers = {}
    for d in prism.build_docs("profile", data_dir=str(copy)):
        right = d["user_id"] == "user0001"
        verdict = d["chosen_position"] if right else "AB".replace(d["chosen_position"], "")
        answers[d["prompt"].strip()] = f"Result: {verdict}"

    def policy(messages: list[Message], model: str) -> str:
        return answers.get(messages[-1]["content"].strip(), "no idea")

    proc, out, sent = run_fake_judge(policy, "prism_profile", meta, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sent == 12
    results = read_results(out)
    assert metric(results, "prism_profile", "acc") == pytest.approx(5 / 6)
    assert metric(results, "prism_profile", "acc_user") == pytest.approx(0.5)
    assert metric(results, "prism_profile", "parse_fail") == 0.0

    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "prism_scalar",
                    "--metadata", meta, "--output_path", str(tmp_path / "rm")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The chosen answer is the longer one in 5 of 6 pairs; turn 1's two answers are equally long
    # (a tie, counted wrong).
    assert metric(read_results(tmp_path / "rm"), "prism_scalar", "acc") == pytest.approx(5 / 6)
    assert "Data: local folder" in proc.stdout and "labelled pairs 6 rows" in proc.stdout


def test_community_alignment_scalar_rm(tmp_path: Path) -> None:
    copy = write_ca(tmp_path / "ca")
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
                    "community_alignment_scalar,community_alignment_scalar_profile", "--metadata",
                    json.dumps({"data_dir": str(copy)}), "--output_path", str(tmp_path / "rm"), "--log_samples"],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(tmp_path / "rm")
    # Under the compact table: by language, by country, and the crowd beside the model.
    assert "community_alignment_scalar by language, acc % as in the table (pairs): fr " in proc.stdout
    assert "community_alignment_scalar by country, acc % as in the table (pairs): France " in proc.stdout
    assert "community_alignment_scalar: majority of other people 71.4%, this model " in proc.stdout
    expected = sum(len(d["choices"][0]) > len(d["choices"][1])
                   for d in community_alignment.build_docs("scalar", data_dir=str(copy))) / 13
    assert metric(results, "community_alignment_scalar", "acc") == pytest.approx(expected)
    assert "community_alignment_scalar_profile" in results["results"]


def test_prism_fewshot_through_prb_method(tmp_path: Path) -> None:
    # Odd-numbered people always choose the shortest answer, even ones the longest: a method that
    # finds the seen people who chose like this one from a single support pair gets the rest right.
    copy = write_prism(tmp_path / "prism", *many_rows(8, 8))
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-method", "--model_args", "method=similar_users", "--tasks",
                    "prism_fewshot", "--metadata", json.dumps({"data_dir": str(copy), "queries": 2,
                                                               "features": "embedding"}),
                    "--output_path", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(out)
    assert "few-shot split (prism): 4 seen users, 4 unseen" in proc.stderr
    assert metric(results, "prism_fewshot", "acc_k4") == 1.0 > metric(results, "prism_fewshot", "acc_k0")
    assert "prism_fewshot k-curve, acc % (95% CI over users):" in proc.stdout
    assert "k=0 " in proc.stdout and "aukc" in proc.stdout


def test_a_missing_copy_is_one_line(tmp_path: Path) -> None:
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "prism_scalar"],
                   cwd=tmp_path, env={"PRB_PRISM_DIR": ""})
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert "prb data download DIR --family prism" in last and "Traceback" not in proc.stderr

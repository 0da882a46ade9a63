"""Odd but valid rows run end to end, and the official task scores like the original script.

A data folder in the HF layout (the bundled sample, with a repeated id, a pair whose two
answers are identical and a blank question in the Art subset) is evaluated with
``prb eval`` twice: a ``prb-rm`` baseline on the scalar task, and ``prb-judge`` against
the fake server on the official task, where the judge always answers
``Result: Response B`` (our reading: B; the original script's: a parse failure, read A).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.replies.order import official_positions
from prb_tasks.testing.fake_server import FakeLLMServer, scripted
from tests.conftest import sample_rows, write_layout
from tests.runner import metric, read_results, read_samples, run_cli

ART = "Art_and_Entertainment"
KEY = "sk-prb-odd-data-0000"


@pytest.fixture(scope="module")
def odd_data(tmp_path_factory) -> Path:
    rows = {s.config: sample_rows(s.config) for s in SUBSETS}
    art = copy.deepcopy(rows[ART])
    art[4]["id"] = art[0]["id"]
    art[6]["rejected"] = art[6]["chosen"]
    art[9]["question"] = "   "
    rows[ART] = art
    return write_layout(tmp_path_factory.mktemp("odd"), rows, "jsonl")


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("prb: warning: ")]


def _assert_warned_once(stderr: str, data: Path) -> None:
    lines = _warnings(stderr)
    origin = f"prb: warning: {data / ART}: "
    assert len(lines) == 3 and all(line.startswith(origin) for line in lines), lines
    assert "1 row with duplicate id (row 5)" in lines[0]
    assert "1 row with a blank question (row 10)" in lines[1]
    assert "1 row with chosen == rejected (row 7)" in lines[2]


def test_scalar_baseline_runs_on_odd_rows(tmp_path, odd_data):
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length",
                    "--tasks", "personalized_rb_scalar", "--metadata", json.dumps({"data_dir": str(odd_data)}),
                    "--output_path", str(out), "--log_samples"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _assert_warned_once(proc.stderr, odd_data)
    results = read_results(out)
    # Identical answers get the same length: a tie, counted wrong.
    assert metric(results, "personalized_rb_scalar_art", "tie_rate") == pytest.approx(1 / 12)
    samples = read_samples(out, "personalized_rb_scalar_art")
    tied = [s for s in samples if s["doc"]["pair_key"] == "art/6"]
    assert len(tied) == 1 and tied[0]["acc"] == 0 and tied[0]["tie_rate"] == 1
    assert sorted(s["doc"]["pair_key"] for s in samples) == sorted(f"art/{n}" for n in range(12))


@pytest.mark.slow
def test_official_judge_on_odd_rows_scores_like_the_original_script(tmp_path, odd_data):
    out = tmp_path / "runs"
    with FakeLLMServer(scripted(["The second one fits.\nResult: Response B"]), record_requests=False) as server:
        proc = run_cli(
            ["eval", "--model", "prb-judge",
             "--model_args", f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                             f"cache_dir={tmp_path / 'cache'}",
             "--tasks", "personalized_rb_official,personalized_rb_art",
             "--metadata", json.dumps({"data_dir": str(odd_data)}),
             "--output_path", str(out), "--log_samples"],
            cwd=tmp_path, env={"PRB_TEST_KEY": KEY},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert server.stats()["total_requests"] == 36 + 24
    # Two tasks read the Art subset; its warnings are printed once.
    _assert_warned_once(proc.stderr, odd_data)
    results = read_results(out)

    pooled = {"A": 0, "B": 0}
    for subset in SUBSETS:
        task = f"personalized_rb_official_{subset.short}"
        positions = official_positions(12)
        samples = sorted(read_samples(out, task), key=lambda s: s["doc_id"])
        # Seeded draws by row order, whatever the ids say.
        assert [s["doc"]["chosen_position"] == "A" for s in samples] == positions
        assert [s["doc"]["pair_key"] for s in samples] == [f"{subset.short}/{n}" for n in range(12)]
        n_a = sum(positions)
        pooled["A"] += n_a
        pooled["B"] += 12 - n_a
        # The original script: every reply is a parse failure, read as A, so it is
        # right exactly where chosen was drawn into A.
        authors = {"acc_official": n_a / 12, "acc_pos_a_official": 1.0, "acc_pos_b_official": 0.0,
                   "pos_bias_official": 1.0, "pos_a_rate_official": 1.0, "parse_fail_official": 1.0}
        ours = {"acc": (12 - n_a) / 12, "acc_pos_a": 0.0, "acc_pos_b": 1.0, "pos_bias": 1.0,
                "pos_a_rate": 0.0, "parse_fail": 0.0}
        for name, value in {**authors, **ours}.items():
            assert metric(results, task, name) == pytest.approx(value), (task, name)

    group = "personalized_rb_official"
    assert metric(results, group, "acc_official") == pytest.approx(pooled["A"] / 36)
    assert metric(results, group, "acc") == pytest.approx(pooled["B"] / 36)
    assert metric(results, group, "pos_bias_official") == pytest.approx(1.0)
    assert metric(results, group, "parse_fail_official") == pytest.approx(1.0)

    # Both orders: each pair gives one judgment to each position.
    assert metric(results, "personalized_rb_art", "acc_pos_a") == 0.0
    assert metric(results, "personalized_rb_art", "acc_pos_b") == 1.0
    assert metric(results, "personalized_rb_art", "pos_bias") == 1.0
    assert "pos_bias: |acc_pos_a - acc_pos_b|" in proc.stdout

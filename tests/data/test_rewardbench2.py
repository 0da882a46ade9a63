"""RewardBench 2: the loader on files in the hub layout, allenai's scoring rules against a
transcription of their code, and the tasks end to end through ``prb eval --model prb-rm``."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.rewardbench2.sources import load_rows
from prb_tasks.documents import rewardbench2
from prb_tasks.scoring.rewardbench2 import best_of_n_result, official_aggregate, process_ties, ties_score
from tests.rewardbench2_fixture import fixture_rows, write_rewardbench2
from tests.runner import flat, metric, read_results, run_cli

SUBSET_TASKS = {"Factuality": "rewardbench2_factuality", "Precise IF": "rewardbench2_precise_if",
                "Math": "rewardbench2_math", "Safety": "rewardbench2_safety", "Focus": "rewardbench2_focus",
                "Ties": "rewardbench2_ties"}


# --- A transcription of allenai/reward-bench @05a9005 (rewardbench/utils.py), kept as their
# --- numpy operations are, to test prb's own implementation against.

def allenai_rerolled_result(scores: list[float]) -> float:
    """reroll_and_score_dataset: the 'results' column of one row."""
    top = np.max(scores)
    return (1 / np.sum(scores == top)) if scores[0] == top else 0


def allenai_ties_overall(rows: list[tuple[str, int, list[float]]]) -> float:
    """process_single_model: the overall Ties score of (id, num_correct, scores) rows."""
    grouped: dict[tuple[str, int], list[tuple[bool, float]]] = defaultdict(list)
    for row_id, num_correct, scores in rows:
        kind, pid = row_id.split(":")
        for i, s in enumerate(scores):
            grouped[(kind, int(pid))].append((i < num_correct, s))

    def stats(samples):
        good = [s for ok, s in samples if ok]
        bad = [s for ok, s in samples if not ok]
        spread = max(good) - min(good) if len(good) > 1 else None
        gap = min(good) - max(bad)
        return gap > 0, spread, gap

    ref, tied = {}, {}
    for (kind, pid), samples in grouped.items():
        (ref if kind == "ref" else tied)[pid] = stats(samples)
    ref_acc = np.mean([s[0] for s in ref.values()]) if ref else 0.0
    tied_acc = np.mean([s[0] for s in tied.values()]) if tied else 0.0
    both = set(ref) & set(tied)
    spread = np.array([tied[p][1] for p in both])
    gap_tied = np.array([tied[p][2] for p in both])
    gap_ref = np.array([ref[p][2] for p in both])
    with np.errstate(divide="ignore", invalid="ignore"):
        preferred = np.mean(gap_tied > spread)
        preferred_hard = np.mean(np.minimum(gap_ref, gap_tied) > spread)
        margin = np.nan_to_num(np.tanh(np.minimum(gap_ref, gap_tied) / spread - 1), nan=0.0)
    return float(0.30 * tied_acc + 0.30 * ref_acc + 0.20 * preferred + 0.20 * preferred_hard
                 + 0.01 * float(np.mean(margin)))


def length_scores(doc: dict) -> list[float]:
    """What ``prb-rm scorer=length`` gives each choice (characters of the stripped response)."""
    return [float(len(c.strip())) for c in doc["choices"]]


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_rewardbench2(tmp_path_factory.mktemp("rb2"), fixture_rows())


@pytest.mark.parametrize("seed", range(40))
def test_best_of_n_rule_matches_allenai(seed: int) -> None:
    rng = random.Random(seed)
    # Small integer scores make shared tops (and a shared top with the correct answer) common.
    scores = [float(rng.randint(0, 3)) for _ in range(rng.choice((2, 4, 6)))]
    assert best_of_n_result(scores) == pytest.approx(float(allenai_rerolled_result(scores)))


@pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value encountered")
@pytest.mark.parametrize("seed", range(60))
def test_ties_score_matches_allenai(seed: int) -> None:
    rng = random.Random(seed)
    rows: list[tuple[str, int, list[float]]] = []
    coarse = seed % 2 == 0  # integer scores: zero spreads (0/0 and x/0) and equal margins
    draw = (lambda: float(rng.randint(0, 4))) if coarse else (lambda: rng.gauss(0.0, 1.0))
    for n in range(rng.randint(1, 8)):
        if rng.random() < 0.9:
            rows.append((f"ref:{n}", 1, [draw() for _ in range(rng.randint(2, 5))]))
        if rng.random() < 0.9:
            k = rng.randint(2, 5)
            rows.append((f"tied:{n}", k, [draw() for _ in range(k + rng.randint(1, 6))]))
    if seed % 10 == 3 and rows:
        rows.append(rows[0])  # a repeated id: both pool their responses into one prompt
    if not rows:
        rows.append(("ref:0", 1, [1.0, 0.0]))
    ours = ties_score(rows).score
    theirs = allenai_ties_overall(rows)
    if np.isnan(theirs):
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)
    # The task's per-document entries carry the same data to the aggregation.
    entries = [process_ties({"id": i, "num_correct": k, "choices": s}, [(x, False) for x in s])["score"]
               for i, k, s in rows]
    assert ties_score(entries).score == ours or (np.isnan(ours) and np.isnan(ties_score(entries).score))


def test_ties_score_known_values() -> None:
    # One prompt: ref right with margin 2; tied right (margin 1) with spread 0.5, so both
    # margin conditions hold and tanh(min(2, 1) / 0.5 - 1) = tanh(1).
    rows = [("ref:0", 1, [3.0, 1.0, 0.5]), ("tied:0", 2, [3.0, 2.5, 1.5, 1.0])]
    got = ties_score(rows)
    assert (got.ref_acc, got.tied_acc, got.correctness_preferred, got.correctness_preferred_hard) == (1, 1, 1, 1)
    assert got.score == pytest.approx(1.0 + 0.01 * np.tanh(1.0))
    # A wrong answer above a correct one: neither accurate nor preferred; tanh(-1/0.5 - 1) < 0.
    bad = ties_score([("ref:0", 1, [1.0, 2.0]), ("tied:0", 2, [3.0, 2.5, 3.5])])
    assert bad.ref_acc == 0 and bad.tied_acc == 0 and bad.correctness_preferred == 0
    assert bad.score == pytest.approx(0.01 * np.tanh(-1.0 / 0.5 - 1))


def test_loader_reads_the_hub_layout(copy_dir: Path, tmp_path: Path) -> None:
    rows = load_rows(str(copy_dir))
    raw = fixture_rows()
    assert len(rows) == len(raw)
    assert rows[0].responses == tuple(raw[0]["chosen"] + raw[0]["rejected"])
    docs = rewardbench2.build_docs("Precise IF", data_dir=str(copy_dir))
    assert {d["subset"] for d in docs} == {"Precise IF"} and len(docs) == 6
    assert docs[0]["choices"][0] == raw[6]["chosen"][0] and docs[0]["num_correct"] == 1
    # The same rows as .jsonl shards read the same.
    jsonl = write_rewardbench2(tmp_path / "j", raw, fmt="jsonl")
    assert [r.responses for r in load_rows(str(jsonl))] == [r.responses for r in rows]


@pytest.mark.parametrize("change, expected", [
    (lambda r: r.update(total_completions=9), r"row 1 \(id '0'\): field 'row': .*total_completions is 9"),
    (lambda r: r.update(chosen="one answer"), r"row 1 \(id '0'\): field 'chosen': "),
    (lambda r: r.update(num_correct=4), r"num_correct 4 leaves no incorrect response"),
    (lambda r: r.update(subset="Ties", id="7"), r"a Ties id must be 'ref:<n>' or 'tied:<n>'"),
    (lambda r: r.pop("prompt"), r"field 'prompt': Field required"),
])
def test_bad_rows_are_one_line(tmp_path: Path, change, expected: str) -> None:
    rows = fixture_rows()
    change(rows[0])
    folder = write_rewardbench2(tmp_path, rows, fmt="jsonl")
    with pytest.raises(DataError) as info:
        load_rows(str(folder))
    message = str(info.value)
    assert "\n" not in message and "test-00000-of-00001.jsonl" in message
    assert re.search(expected, message), message


def test_missing_copy_and_subset_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"no folder '.*data'; a RewardBench 2 copy has the HF layout "
                                         r"<dir>/data/test-00000-of-00001.parquet"):
        load_rows(str(tmp_path))
    only_math = write_rewardbench2(tmp_path / "m", [r for r in fixture_rows() if r["subset"] == "Math"])
    with pytest.raises(DataError, match=r"has no rows of subset 'Ties' \(it holds Math\)"):
        rewardbench2.build_docs("ties", data_dir=str(only_math))
    with pytest.raises(DataError, match=r"unknown RewardBench 2 subset 'chat'; expected one of Factuality"):
        rewardbench2.build_docs("chat", data_dir=str(only_math))


def test_rewardbench2_through_prb_rm(tmp_path: Path, copy_dir: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "rewardbench2",
                    "--metadata", json.dumps({"data_dir": str(copy_dir)}), "--output_path", str(out)],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(out)
    expected: dict[str, float] = {}
    responses = 0
    for subset, task in SUBSET_TASKS.items():
        docs = rewardbench2.build_docs(subset, data_dir=str(copy_dir))
        responses += sum(len(d["choices"]) for d in docs)
        if subset == "Ties":
            expected[subset] = allenai_ties_overall([(d["id"], d["num_correct"], length_scores(d)) for d in docs])
        else:
            expected[subset] = float(np.mean([allenai_rerolled_result(length_scores(d)) for d in docs]))
        assert metric(results, task, "score") == pytest.approx(expected[subset]), subset
    # The official aggregate: the plain mean of the six subsets (not weighted by rows).
    assert metric(results, "rewardbench2", "score") == pytest.approx(official_aggregate(expected))
    assert metric(results, "rewardbench2", "score") == pytest.approx(sum(expected.values()) / 6)
    # Every response was scored once: one request per response, none twice.
    assert re.search(rf"prb-rm \(length\): {responses} responses \(", proc.stderr), proc.stderr[-2000:]
    assert f"Data: local folder {copy_dir}" in proc.stdout
    # top1 (best-of-N subsets only; Ties has none): the group row showed "-" beside subsets with values. It is
    # the plain mean of the five best-of-N subsets, said in the legend, without lm-eval's missing-metric warning.
    top1 = [metric(results, task, "top1") for subset, task in SUBSET_TASKS.items() if subset != "Ties"]
    assert len(top1) == 5 and "top1,none" not in results["results"]["rewardbench2_ties"]
    assert metric(results, "rewardbench2", "top1") == pytest.approx(sum(top1) / 5)
    (group,) = [line for line in proc.stdout.splitlines() if line.startswith("rewardbench2 ")]
    assert group.split()[-1] == f"{100 * sum(top1) / 5:.1f}", group
    assert "top1: share of best-of-N rows where the correct answer alone has the top reward; group row: the plain " \
        "mean of the five best-of-N subsets (Ties has no top1)" in flat(proc.stdout)
    assert "is missing in" not in proc.stderr


def test_prb_data_validate(copy_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.cli import main

    assert main(["data", "validate", str(copy_dir), "--family", "rewardbench2"]) == 0
    out = capsys.readouterr().out
    assert "Precise IF" in out \
        and "total                                      40  ok (the published data has 1865" in out
    rows = fixture_rows()
    rows[3]["num_correct"] = 4
    broken = write_rewardbench2(tmp_path / "b", rows)
    assert main(["data", "validate", str(broken), "--family", "rewardbench2"]) == 1
    assert "row 4 (id '3'): field 'row': Value error, num_correct 4 leaves no incorrect" in capsys.readouterr().out


def test_prb_data_validate_names_duplicate_ids_and_unknown_subsets(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 48 item 7: both were accepted silently (exit 0).
    from prb_tasks.cli import main

    rows = fixture_rows()
    first = next(r for r in rows if r["subset"] == "Math")
    rows.append(dict(first))  # the same id twice in Math
    rows[0] = {**rows[0], "subset": "Mathh"}
    folder = write_rewardbench2(tmp_path / "b", rows)
    assert main(["data", "validate", str(folder), "--family", "rewardbench2"]) == 1
    out = capsys.readouterr().out.splitlines()
    problems = [line for line in out if line.startswith("prb: ")]
    at = rows.index(first) + 1
    assert problems == [
        f"prb: {folder}: id '{first['id']}' appears 2 times in subset Math (rows {at}, {len(rows)}); keep one, "
        "or download the data again",
        f"prb: {folder}: subset 'Mathh' (1 row) is none of the benchmark's (Factuality, Precise IF, Math, Safety, "
        "Focus, Ties), so no task scores it; fix the subset or download the data again",
    ]

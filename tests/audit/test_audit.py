"""``prb audit``: content-blind shortcuts on a data set, checked against hand counts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.conftest import sample_rows, write_layout
from tests.runner import run_cli

NAMES = ["longer", "shorter", "question overlap", "profile overlap", "position"]


def audit_json(args: list[str], cwd: Path) -> dict:
    proc = run_cli(["audit", *args, "--format", "json"], cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def by_name(report: dict) -> dict[str, dict]:
    return {s["name"]: s for s in report["shortcuts"]}


def credit(chosen: float, rejected: float) -> float:
    return 0.5 if chosen == rejected else float(chosen > rejected)


def test_bundled_sample_matches_hand_counts(tmp_path):
    report = audit_json(["sample"], tmp_path)
    rows = [r for s in SUBSETS for r in sample_rows(s.config)]
    assert report["pairs"] == len(rows) == 36
    assert report["resampled"] == {"unit": "pairs", "count": 36}  # one pair per asker: pairs
    shortcuts = by_name(report)
    assert list(shortcuts) == NAMES
    longer = sum(credit(len(r["chosen"].strip()), len(r["rejected"].strip())) for r in rows) / len(rows)
    assert shortcuts["longer"]["acc"]["value"] == pytest.approx(longer)
    assert shortcuts["shorter"]["acc"]["value"] == pytest.approx(1 - longer)
    # Position: the authors' seeded order, one seed per subset, one draw per row.
    first = []
    for s in SUBSETS:
        random.seed(42)
        first += [random.random() < 0.5 for _ in sample_rows(s.config)]
    assert shortcuts["position"]["acc"]["value"] == pytest.approx(sum(first) / len(first))
    for s in shortcuts.values():
        assert s["pairs"] == 36
        assert s["acc"]["low"] <= s["acc"]["value"] <= s["acc"]["high"]
    assert set(shortcuts["longer"]["subsets"]) == {s.config for s in SUBSETS}

    text = run_cli(["audit", "sample"], cwd=tmp_path)
    assert text.returncode == 0 and text.stderr == ""
    assert "36 pairs, intervals resample 36 pairs (within subsets)" in text.stdout
    for name in NAMES:
        assert f"\n{name} " in text.stdout


def longer_always_wins(users: int = 5) -> list[dict]:
    """Users of very different sizes whose chosen answer is always the longer one."""
    records = []
    for u in range(users):
        prefs = []
        for i in range(1 + 3 * u):
            short, long = f"No ({u}.{i}).", f"Yes, and here is why, in detail, for case {u}.{i}: it depends."
            prefs.append({"prompt": f"Question {u}.{i}?", "response_A": short if i % 2 else long,
                          "response_B": long if i % 2 else short,
                          "chosen_response": "response_B" if i % 2 else "response_A"})
        records.append({"user_id": f"u{u}", "preferences": prefs})
    return records


def test_fixture_where_longer_wins_every_pair(tmp_path):
    path = tmp_path / "prefs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in longer_always_wins()), encoding="utf-8")
    report = audit_json([str(path)], tmp_path)
    assert report["pairs"] == 1 + 4 + 7 + 10 + 13
    assert report["resampled"] == {"unit": "users", "count": 5}
    shortcuts = by_name(report)
    assert shortcuts["longer"]["acc"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert shortcuts["shorter"]["acc"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert shortcuts["longer"]["ties"] == 0.0
    # Chosen is listed first on even items: 1 + 2 + 4 + 5 + 7 of 35.
    assert shortcuts["position"]["acc"]["value"] == pytest.approx(19 / 35)
    # The single-preference user has no earlier choices: profile overlap leaves that pair out.
    assert shortcuts["profile overlap"]["pairs"] == 34


def test_personalized_rb_folder_where_longer_wins(tmp_path):
    rows = {}
    for s in SUBSETS:
        rows[s.config] = []
        for r in sample_rows(s.config):
            a, b = sorted((r["chosen"], r["rejected"]), key=len)
            if len(a) == len(b):
                b += " Indeed."
            rows[s.config].append({**r, "chosen": b, "rejected": a})
    folder = write_layout(tmp_path / "copy", rows, "jsonl")
    shortcuts = by_name(audit_json([str(folder)], tmp_path))
    assert shortcuts["longer"]["acc"]["value"] == 1.0
    assert all(v == 1.0 for v in shortcuts["longer"]["subsets"].values())


def test_personalllm_copy_resamples_users(tmp_path):
    folder = write_personalllm(tmp_path / "pllm", fixture_rows())
    report = audit_json([str(folder), "--metadata", json.dumps({"n_users": 12, "items_per_user": 3})], tmp_path)
    assert report["family"] == "personalllm"
    assert report["resampled"]["unit"] == "users" and report["resampled"]["count"] == 12
    assert report["pairs"] == 36
    assert by_name(report)["profile overlap"]["pairs"] > 0


@pytest.mark.parametrize("args,expected", [
    (["no/such/folder"], "'no/such/folder' does not exist"),
    (["notes.txt"], "is a file but not a preference file"),
    (["empty_dir"], "holds no Personalized RewardBench subset folder"),
    (["broken.jsonl"], "broken.jsonl"),
    (["sample", "--metadata", "{oops"], "--metadata is not JSON"),
    (["sample", "--metadata", '{"alpha": 0.05}'], "unknown --metadata key 'alpha' for personalized_rb data"),
    (["example", "--metadata", '{"data_path": "x.jsonl"}'], "give the data as the DATA argument"),
])
def test_mistakes_are_one_line_and_exit_2(tmp_path, args, expected):
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    (tmp_path / "empty_dir").mkdir()
    (tmp_path / "broken.jsonl").write_text('{"user_id": "u1", "preferences": [{"prompt": "x"}]}\n',
                                           encoding="utf-8")
    proc = run_cli(["audit", *args], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prb audit: ") and expected in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr

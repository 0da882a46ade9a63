"""``prb compare``'s split of judges' consistency and position bias by a quality-gap proxy:
a document's own gap (PRISM's rating gap, PersonalLLM's reward gap) or, on Personalized
RewardBench, a user-blind judge's soft margin; checked by hand on constructed runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prb_tasks.replies.soft_verdict import SoftVerdict, with_mark
from prb_tasks.report.build import build_report
from prb_tasks.report.gap_split import gap_lines, gap_split
from prb_tasks.report.render_md import render_markdown
from prb_tasks.report.render_text import render_text
from tests.report_fixture import write_run


def _edit(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    for path in folder.glob("samples_*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            change(row)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _number(key: str) -> int:
    return int(key.split("/")[1])


def _always_a(row: dict[str, Any]) -> None:
    """Turn the judge into one that answers A on the pairs numbered below 6 (near-equal ones here)."""
    if _number(row["doc"]["pair_key"]) < 6:
        row["filtered_resps"] = ["Result: A"]
        row["resps"] = [["Result: A"]]
        row["pos_a_rate"] = "A"
        row["acc"] = float(row["doc"]["chosen_position"] == "A")


def test_a_documents_own_gap_splits_consistency_and_position_bias(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "j", "personalized_rb", "prb-judge", {"model": "openai/j"}, lambda key: True)

    def gap(row: dict[str, Any]) -> None:
        row["doc"]["rating_gap"] = -float(_number(row["doc"]["pair_key"]))  # a sign is ignored

    _edit(runs / "j", gap)
    _edit(runs / "j", _always_a)
    report = build_report([runs])
    split = gap_split(report.sections[0])
    assert split is not None and split.proxy == "PRISM's rating gap"
    # 12 pairs per subset numbered 0-11: gaps 0-11, median 5.5; pairs 0-5 near-equal (18), 6-11 clear (18).
    assert (split.cut, split.near, split.clear) == (5.5, 18, 18)
    (_, near, clear), = split.rows
    assert near.consistency == 0.0 and near.pos_bias == 1.0 and near.pairs == 18
    assert clear.consistency == 1.0 and clear.pos_bias == 0.0
    text = render_text(report)
    assert "where quality is equal (PRISM's rating gap; near-equal: at or below its median 5.5, 18 pairs" in text
    assert "consistency % near-equal 0.0 vs clear 100.0; pos_bias % near-equal 100.0 vs clear 0.0" in text
    assert all(len(line) <= 120 for line in text.splitlines() if "consistency %" in line or "where quality" in line)
    assert "Where quality is equal: judges split by PRISM's rating gap" in render_markdown(report)


def test_a_user_blind_judges_soft_margin_splits_personalized_rewardbench(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "blind", "personalized_rb", "prb-judge", {"model": "openai/blind", "logprobs": 5},
              lambda key: True)
    write_run(runs / "other", "personalized_rb", "prb-judge", {"model": "openai/other"}, lambda key: True)

    def sure(row: dict[str, Any]) -> None:
        # Sure (0.95) of the pairs numbered 6 and up, nearly level (0.55) below.
        p = 0.95 if _number(row["doc"]["pair_key"]) >= 6 else 0.55
        letter = row["filtered_resps"][0][-1]
        text = with_mark(row["filtered_resps"][0], SoftVerdict(p if letter == "A" else 1 - p, 1.0))
        row["filtered_resps"], row["resps"] = [text], [[text]]

    _edit(runs / "blind", sure)
    _edit(runs / "other", _always_a)
    report = build_report([runs])
    split = gap_split(report.sections[0])
    assert split is not None and "user-blind judge" in split.proxy and "openai/blind" in split.proxy
    assert (round(split.cut, 6), split.near, split.clear) == (0.5, 18, 18)
    rows = {label: (near, clear) for label, near, clear in split.rows}
    other = next(v for k, v in rows.items() if "openai/other" in k)
    assert other[0].pos_bias == 1.0 and other[1].pos_bias == 0.0
    assert any("openai/other" in line for line in gap_lines(report.sections[0]))


def test_no_split_without_a_proxy(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "j", "personalized_rb", "prb-judge", {"model": "openai/j"}, lambda key: True)
    report = build_report([runs])
    assert gap_split(report.sections[0]) is None and "where quality is equal" not in render_text(report)


def test_prb_eval_lines_read_the_logged_samples(tmp_path: Path) -> None:
    from prb_tasks.report.gap_split import eval_gap_lines

    runs = tmp_path / "runs"
    write_run(runs / "j", "personalized_rb", "prb-judge", {"model": "openai/j"}, lambda key: True)

    def gap(row: dict[str, Any]) -> None:
        row["doc"]["reward_gap"] = float(_number(row["doc"]["pair_key"]))

    _edit(runs / "j", gap)
    _edit(runs / "j", _always_a)
    samples = [json.loads(line) for path in sorted((runs / "j").glob("samples_*.jsonl"))
               for line in path.read_text().splitlines()]
    line, = eval_gap_lines("personalized_rb", samples, user_blind=False)
    assert line == ("personalized_rb where quality is equal (PersonalLLM's reward gap, at or below its median 5.5: "
                    "18 pairs; above: 18): consistency % 0.0 vs 100.0, pos_bias % 100.0 vs 0.0")
    # Without a gap on the documents only a user-blind judge's own soft margin can stand in.
    plain = [json.loads(line) for path in sorted((runs / "j").glob("samples_*.jsonl"))
             for line in path.read_text().replace('"reward_gap"', '"other"').splitlines()]
    assert eval_gap_lines("personalized_rb", plain, user_blind=True) == []  # no soft verdicts either

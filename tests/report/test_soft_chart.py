"""The confidence chart of ``prb compare`` for a judge run with soft verdicts: drawn from the
marked replies in the samples, with labelled axes and a legend; absent without soft verdicts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from prb_tasks.replies.soft_verdict import SoftVerdict, with_mark
from prb_tasks.report.build import build_report
from prb_tasks.report.charts import draw_charts
from prb_tasks.report.charts_soft import entry_soft_pairs
from tests.report_fixture import write_run

SVG = "{http://www.w3.org/2000/svg}"


def _mark(folder: Path, sure: float) -> None:
    """Give every logged reply of a run a soft verdict of ``sure`` for the letter it names."""
    for path in folder.glob("samples_*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            text = row["filtered_resps"][0]
            p_first = sure if text.endswith("A") else 1 - sure
            row["filtered_resps"] = [with_mark(text, SoftVerdict(p_first, 1.0))]
            row["resps"] = [[row["filtered_resps"][0]]]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.slow
def test_the_confidence_chart_comes_from_the_marked_replies(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "soft", "personalized_rb", "prb-judge", {"model": "openai/local", "logprobs": 5},
              lambda key: int(key.split("/")[1]) % 4 != 0)
    write_run(runs / "hard", "personalized_rb", "prb-judge", {"model": "openai/other"}, lambda key: True)
    _mark(runs / "soft", 0.8)
    report = build_report([runs])
    soft = next(e for s in report.sections for e in s.entries if "openai/local" in e.label)
    pairs, total = entry_soft_pairs(soft)
    # Every order names its letter at 0.8: right pairs score 0.8, wrong ones 0.2.
    assert total == 36 and len(pairs) == 36
    assert sorted({round(p.score, 6) for p in pairs}) == [0.2, 0.8]
    assert draw_charts(report, tmp_path / "out") == []
    charts = {title for titles in report.charts.values() for title, _ in titles}
    assert any("reliability diagram and accuracy vs coverage" in t for t in charts)
    svg = next((tmp_path / "out").glob("*_confidence.svg"))
    texts = " ".join("".join(t.itertext()) for t in ET.parse(svg).iter(f"{SVG}text"))
    for words in ("confidence % of the soft verdict", "accuracy % of the soft verdicts in the bin",
                  "coverage %", "as right as it is sure", "ECE", "36 pairs"):
        assert words in texts, words
    assert "openai/other" not in texts  # no soft verdicts: not in the chart


def test_no_confidence_chart_without_soft_verdicts(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "hard", "personalized_rb", "prb-judge", {"model": "openai/other"}, lambda key: True)
    report = build_report([runs])
    draw_charts(report, tmp_path / "out")
    assert not list((tmp_path / "out").glob("*_confidence.*"))

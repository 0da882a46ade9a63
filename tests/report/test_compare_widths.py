"""``prb compare``'s terminal output with long model labels: a label carrying ``api_base`` took the ranking
table to 138 columns (issue 63, item 8); shortened to fit, it must still say which model each row is."""

from __future__ import annotations

from pathlib import Path

from prb_tasks.common.terminal import WIDTH
from prb_tasks.report.build import build_report
from prb_tasks.report.formatting import short_label
from prb_tasks.report.render_text import render_text
from tests.report_fixture import write_run

BASE = "http://judge-server.internal.example.com:8000/v1"
MODELS = ("openai/meta-llama/Llama-3.1-8B-Instruct", "openai/Qwen/Qwen2.5-72B-Instruct")


def test_a_shortened_label_keeps_the_model_and_cuts_the_server_first():
    label = f"prb-judge (model={MODELS[0]}, api_base={BASE.removeprefix('http://')}, temperature=0.7)"
    short = short_label(label, 60)
    assert len(short) <= 60 and short.startswith(MODELS[0] + ", ") and short.endswith(", 0.7")
    assert "…" in short and short.split(", ")[1].endswith("8000/v1")  # the server's two ends
    assert short_label("prb-judge (model=openai/gpt-4o-mini)") == "openai/gpt-4o-mini"
    assert short_label("a name the user gave, far too long to fit in a column", 20) == "a name…t in a column"
    # A model name longer than the room is cut like any other name, its two ends kept.
    tight = short_label(f"prb-judge (model={MODELS[0]}, api_base={BASE.removeprefix('http://')})", 28)
    assert len(tight) == 28 and tight.startswith("openai/me") and "…" in tight


def test_the_ranking_table_fits_and_names_each_model_when_labels_carry_api_base(tmp_path: Path):
    def right(key: str) -> bool:
        return int(key.split("/")[1]) % 3 != 0

    for n, model in enumerate(MODELS):
        write_run(tmp_path / f"judge{n}", "personalized_rb_sample", "prb-judge",
                  {"model": model, "api_base": BASE, "num_concurrent": 8}, right, usd=0.5 * n)
    write_run(tmp_path / "rm", "personalized_rb_sample_scalar", "prb-rm",
              {"pretrained": "Skywork/Skywork-Reward-V2-Llama-3.1-8B", "api_base": BASE}, right)
    text = render_text(build_report([tmp_path]))
    assert [line for line in text.splitlines() if len(line) > WIDTH] == []
    lines = text.splitlines()
    rows = [line for line in lines if line[:3].strip().isdigit()]
    assert len(rows) == 3 and all(line.split()[1].count("…") <= 1 for line in rows)
    # Each row's name, cut to fit, is given in full under the table, by its rank, with its server.
    for name in (*MODELS, "Skywork/Skywork-Reward-V2-Llama-3.1-8B"):
        (full,) = [line for line in lines if line.startswith("model #") and f"={name}, " in line]
        assert "judge-server.internal.example.com:8000/v1" in full
        (row,) = [row for row in rows if row.split()[0] == full.split()[1].strip("#:")]
        assert row.split()[1].startswith(name[:6]) and row.split()[1].endswith(name[-6:]), (row, full)

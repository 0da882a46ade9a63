"""``report.md`` shows a hostile model name as text: what a Markdown renderer would take
as HTML (``<script>``, entities) is escaped everywhere the name appears."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.report.render_md import md_text
from tests.runner import run_cli

HOSTILE = 'rm<script>alert(1)</script><img src=x onerror="alert(2)">&amp;'


def test_md_text_escapes_html_and_entities() -> None:
    assert md_text(HOSTILE) == ('rm&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror="alert(2)"&gt;'
                                "&amp;amp;")
    assert md_text("plain text, 95% CI") == "plain text, 95% CI"


@pytest.mark.slow
def test_a_model_name_with_markup_is_escaped_in_report_md(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name, scorer in (("length", "length"), ("bm25", "bm25")):
        proc = run_cli(["eval", "--model", "prb-rm", "--model_args", f"scorer={scorer}", "--tasks",
                        "personalized_rb_sample_scalar", "--output_path", str(runs / name), "--log_samples"],
                       cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
    results = next((runs / "length").rglob("results_*.json"))
    data = json.loads(results.read_text(encoding="utf-8"))
    data["config"]["model"] = HOSTILE
    results.write_text(json.dumps(data), encoding="utf-8")
    proc = run_cli(["compare", str(runs), "--out", str(tmp_path / "report")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    # The name is in the ranking, the score, tie and pairwise tables, each time as text.
    assert markdown.count(md_text(HOSTILE)) >= 4
    assert "<script" not in markdown and "<img" not in markdown and "&amp;\n" not in markdown

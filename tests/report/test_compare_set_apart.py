"""``prb compare`` never ranks a run whose judgments were mostly skipped or failed (a dead
server, a spent budget): it is set apart, with why, in every output."""

from __future__ import annotations

import json
from pathlib import Path

from prb_tasks.report.build import SET_APART_SHARE, build_report
from tests.report_fixture import write_run
from tests.runner import run_cli


def cut_short(results: Path, share: float, outcome: str = "skip_rate") -> None:
    """Mark the first ``share`` of every samples file's judgments skipped (or failed): wrong, no verdict."""
    for path in results.parent.glob("samples_*.jsonl"):
        samples = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for sample in samples[:round(share * len(samples))]:
            mark = "[prb:skipped] endpoint not answering" if outcome == "skip_rate" else "[prb:error] Timeout"
            sample.update({"acc": 0.0, "pos_a_rate": None, outcome: 1.0, "resps": [[mark]], "filtered_resps": [mark]})
        path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")


def runs(tmp_path: Path) -> Path:
    good = lambda key: int(key.split("/")[1]) % 3 != 0  # noqa: E731
    write_run(tmp_path / "a", "personalized_rb_sample", "prb-judge", {"model": "openai/steady"}, good)
    cut_short(write_run(tmp_path / "b", "personalized_rb_sample", "prb-judge", {"model": "openai/dead"},
                        lambda key: True), 0.92)
    cut_short(write_run(tmp_path / "c", "personalized_rb_sample", "prb-judge", {"model": "openai/flaky"}, good),
              0.10)  # under the threshold: ranked
    cut_short(write_run(tmp_path / "d", "personalized_rb_sample", "prb-judge", {"model": "openai/failing"}, good),
              0.5, "error_rate")
    return tmp_path


def test_a_run_cut_short_is_not_ranked(tmp_path: Path) -> None:
    (section,) = build_report([runs(tmp_path)]).sections
    label = {s.id: s.label for s in section.summaries}
    assert sorted(label[r.id] for r in section.ranking) == ["prb-judge (model=openai/flaky)",
                                                            "prb-judge (model=openai/steady)"]
    why = {label[i]: text for i, text in section.set_apart.items()}
    assert why["prb-judge (model=openai/dead)"].startswith("cut short: 91.7% of its judgments skipped (more than 20%")
    assert why["prb-judge (model=openai/failing)"].startswith("50.0% failed (more than 20%")
    assert SET_APART_SHARE == 0.20
    # Nor compared: no significance test names a set-apart run.
    apart = set(section.set_apart)
    assert all(c.first not in apart and c.second not in apart for c in section.comparisons)


def test_every_output_says_why(tmp_path: Path) -> None:
    runs(tmp_path)
    proc = run_cli(["compare", str(tmp_path), "--out", str(tmp_path / "report"), "--no-charts"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout.split("\n\n")[0].splitlines()
    ranked = [line for line in table if line[:1].isdigit()]
    assert len(ranked) == 2 and not any("dead" in line or "failing" in line for line in ranked)
    assert any(line.startswith("not ranked: prb-judge (model=openai/dead) (acc ") and ": cut short: 91.7%" in line
               for line in table), proc.stdout
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "Not ranked: runs with many judgments skipped or failed" in markdown and "cut short: 91.7%" in markdown
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "Not ranked" in html and "cut short: 91.7%" in html
    data = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    (section,) = data["sections"]
    assert {x["label"] for x in section["set_apart"]} == {"prb-judge (model=openai/dead)",
                                                         "prb-judge (model=openai/failing)"}

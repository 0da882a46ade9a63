"""``python -m benchmarks --only ... --update``: new sections go into the report already there.

Before, ``--only full`` wrote a report holding that section alone over ``docs/benchmarks.md``,
so regenerating one section meant splicing by hand a file that says "do not edit by hand".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import suite
from benchmarks.report_merge import merge, parse

OLD = """# Benchmarks

- Machine: old machine
- Command: `python -m benchmarks` (17 min); 3 trial(s) per measurement

## Summary

| measure | `prb-judge` | `local-chat-completions` |
|---|---|---|
| judging | 6.6 s | 6.7 s |
| start-up | 1.1 s | 1.2 s |

## The fake judge server alone

server table, old

## Start-up on the bundled sample

start-up table, old

## Scalar reward models

rm table, old
"""

FRESH = """# Benchmarks

- Machine: new machine
- Command: `python -m benchmarks --only startup --update`

## Summary

| measure | `prb-judge` | `local-chat-completions` | `lm_eval --include_path` |
|---|---|---|---|
| start-up | 0.9 s | - | 6.8 s |
| start-up CPU | 2.0 s | 2.1 s | - |

## Start-up on the bundled sample

start-up table, new

## A small first run: CPU, wall and memory

lean table, new
"""


def test_merge_replaces_only_the_sections_and_cells_measured_again():
    merged = merge(OLD, FRESH, "2026-12-01, prb commit abc")
    report = parse(merged)
    assert list(report.sections) == ["The fake judge server alone", "Start-up on the bundled sample",
                                     "Scalar reward models", "A small first run: CPU, wall and memory"]
    assert "server table, old" in report.sections["The fake judge server alone"]
    assert "start-up table, new" in report.sections["Start-up on the bundled sample"]
    assert "old" not in report.sections["Start-up on the bundled sample"]
    assert "rm table, old" in report.sections["Scalar reward models"]
    # A cell measured again replaces the old one; one the new run left empty ("-") keeps the old value.
    assert report.summary["start-up"] == {"`prb-judge`": "0.9 s", "`local-chat-completions`": "1.2 s",
                                          "`lm_eval --include_path`": "6.8 s"}
    assert report.summary["judging"]["`prb-judge`"] == "6.6 s"
    assert report.summary["judging"].get("`lm_eval --include_path`", "-") == "-"
    assert list(report.summary)[-1] == "start-up CPU"
    # The header keeps the full run's machine and command, and says what was measured again, when.
    assert "- Machine: old machine" in report.preamble and "new machine" not in merged
    command = report.preamble.index("- Command: `python -m benchmarks` (17 min); 3 trial(s) per measurement")
    assert report.preamble[command + 1] == (
        "- Measured again alone (`--update`): *Start-up on the bundled sample*, *A small first run: CPU, wall "
        "and memory*: 2026-12-01, prb commit abc")
    # Measured again later, the same sections are named by the newest line only.
    again = parse(merge(merged, FRESH, "later"))
    assert [line for line in again.preamble if line.startswith("- Measured again")] == [
        "- Measured again alone (`--update`): *Start-up on the bundled sample*, *A small first run: CPU, wall "
        "and memory*: later"]


def test_an_earlier_update_line_keeps_naming_only_sections_not_measured_since():
    merged = merge(OLD, FRESH, "first")  # start-up and the small first run
    only_lean = "# Benchmarks\n\n## A small first run: CPU, wall and memory\n\nlean table, newer\n"
    second = merge(merged, only_lean, "second")
    assert [line for line in parse(second).preamble if line.startswith("- Measured again")] == [
        "- Measured again alone (`--update`): *Start-up on the bundled sample*: first",
        "- Measured again alone (`--update`): *A small first run: CPU, wall and memory*: second"]
    # The line of the first update goes once every section it named was measured again.
    third = merge(second, FRESH, "third")
    assert [line for line in parse(third).preamble if line.startswith("- Measured again")] == [
        "- Measured again alone (`--update`): *Start-up on the bundled sample*, *A small first run: CPU, wall "
        "and memory*: third"]


def test_merge_of_a_report_into_itself_changes_nothing_but_the_stamp():
    merged = merge(OLD, OLD, "now")
    assert merged.replace(
        "- Measured again alone (`--update`): *The fake judge server alone*, *Start-up on the bundled sample*, "
        "*Scalar reward models*: now\n", "") == OLD


def test_update_writes_the_section_into_the_existing_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    out = tmp_path / "benchmarks.md"
    out.write_text(OLD, encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps({"plan": {}, "results": {"server": [1], "startup": [0]}}))

    def startup(self: suite.Suite) -> None:  # the section's measuring replaced by a fixed table
        section = self.section(suite.Section("Start-up on the bundled sample", "intro", ["a"], rows=[["new"]]))
        self.headline.setdefault("start-up", {})["prb-judge"] = "0.5 s"
        self.raw["startup"] = [2]
        self.finish(section)

    monkeypatch.setattr(suite.Suite, "startup", startup)
    assert suite.main(["--only", "startup", "--update", "--out", str(out), "--work", str(tmp_path / "w")]) == 0
    report = parse(out.read_text(encoding="utf-8"))
    assert "| new |" in report.sections["Start-up on the bundled sample"]
    assert "server table, old" in report.sections["The fake judge server alone"]
    assert report.summary["start-up"]["`prb-judge`"] == "0.5 s"
    assert report.summary["start-up"]["`local-chat-completions`"] == "1.2 s"
    assert any(line.startswith("- Measured again alone (`--update`): *Start-up on the bundled sample*: ")
               and "--only startup --update" in line for line in report.preamble)
    assert json.loads(out.with_suffix(".json").read_text())["results"] == {"server": [1], "startup": [2]}


def test_update_without_a_report_to_update_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    missing = tmp_path / "none.md"
    with pytest.raises(SystemExit) as stop:
        suite.main(["--only", "startup", "--update", "--out", str(missing)])
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"--update: {missing} does not exist yet" in error and "Traceback" not in error
    assert not missing.exists()


def test_cpu_ratio_note_pairs_the_trials_that_ran_side_by_side():
    def entry(backend: str, cpus: list[float], walls: list[float]) -> dict:
        return {"task": "personalized_rb_profile", "variant": "first run", "backend": backend,
                "code": "this checkout", "trials": [{"cpu": c, "wall": w} for c, w in zip(cpus, walls)]}

    note = suite._cpu_ratios([entry("prb-judge", [9.0, 12.0, 10.0], [5.0, 6.0, 7.0]),
                              entry("local-chat-completions", [10.0, 10.0, 10.0], [7.0, 6.0, 5.0])])
    # Medians 10.0 / 10.0; trial by trial 0.9, 1.2, 1.0.
    assert "`personalized_rb_profile` (first run) CPU 1.00x (trial by trial 0.90-1.20x), wall 1.00x" in note

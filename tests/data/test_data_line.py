"""The "Data:" line under prb eval's table counts each row once."""

from __future__ import annotations

from prb_tasks.data.provenance import DataSource, summary_lines

SUBS = ("Art_and_Entertainment", "Lifestyle_and_Personal_Development", "Society_and_Culture")


def test_a_task_reading_all_subsets_at_once_does_not_count_them_twice() -> None:
    # personalized_rb_sample_scalar reads each subset; personalized_rb_bon reads the three at once.
    sources = {f"scalar_{s}": DataSource("sample", "sample", s, 12) for s in SUBS}
    sources["bon"] = DataSource("sample", "sample", "+".join(SUBS), 36)
    [line] = summary_lines(sources)
    assert line.endswith(": Art_and_Entertainment 12, Lifestyle_and_Personal_Development 12, "
                         "Society_and_Culture 12 rows (36 in total)")


def test_a_combined_read_alone_is_shown_as_read() -> None:
    [line] = summary_lines({"bon": DataSource("local", "/d", "+".join(SUBS[:2]), 20),
                            "one": DataSource("local", "/d", SUBS[2], 5)})
    assert line == (f"Data: local folder /d: {SUBS[0]}+{SUBS[1]} 20, {SUBS[2]} 5 rows (25 in total)")

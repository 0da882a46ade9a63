"""Put freshly measured sections into an existing ``docs/benchmarks.md``.

``python -m benchmarks --only full --update`` measures one section; the report it writes
holds that section alone. :func:`merge` puts it (and its rows of the summary table) into
the report already there, leaving every other section as it was measured, and says under
the header which sections were measured again, when, and with which command. An earlier
such line stops naming the sections measured again since (and goes once it names none), so
each section is named by the line of its newest measurement only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

UPDATED = "- Measured again alone (`--update`): "
# One "*title*" of an UPDATED line, then ", " before the next or ": " before the stamp
# (titles may hold ": " themselves, never "*").
_NAMED = re.compile(r"\*([^*]+)\*(, |: )")


@dataclass
class Report:
    """A report split into its parts.

    Attributes:
        preamble: the lines before the summary (title, machine, command).
        columns: the summary table's backend columns, in order.
        summary: summary rows: measure -> column -> cell.
        sections: ``## title`` -> the section's text (heading included), in order.
    """

    preamble: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    summary: dict[str, dict[str, str]] = field(default_factory=dict)
    sections: dict[str, str] = field(default_factory=dict)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse(text: str) -> Report:
    """Split a report written by the suite into preamble, summary rows and sections."""
    report = Report()
    blocks = re.split(r"^(?=## )", text, flags=re.MULTILINE)
    report.preamble = blocks[0].rstrip("\n").split("\n")
    for block in blocks[1:]:
        title = block.split("\n", 1)[0][3:].strip()
        if title != "Summary":
            report.sections[title] = block.rstrip("\n") + "\n"
            continue
        rows = [line for line in block.split("\n") if line.startswith("|")]
        if len(rows) < 2:
            continue
        report.columns = _cells(rows[0])[1:]
        for line in rows[2:]:
            measure, *cells = _cells(line)
            report.summary[measure] = dict(zip(report.columns, cells))
    return report


def render(report: Report) -> str:
    """The report as markdown again."""
    lines = [*report.preamble, ""]
    if report.summary:
        lines += ["## Summary", "", "| measure | " + " | ".join(report.columns) + " |",
                  "|---|" + "|".join("---" for _ in report.columns) + "|"]
        lines += [f"| {measure} | " + " | ".join(cells.get(c, "-") for c in report.columns) + " |"
                  for measure, cells in report.summary.items()]
        lines.append("")
    return "\n".join(lines) + "\n" + "\n".join(report.sections.values())


def merge(old: str, fresh: str, stamp: str) -> str:
    """``old`` with every section and summary cell of ``fresh`` in place of its own.

    Args:
        old: the report there now.
        fresh: a report of some sections only (``--only``).
        stamp: what to say of them under the header: when, which commit, which command.

    Sections new to ``old`` go at its end; a summary cell ``fresh`` has replaces the old
    one and every other cell stays; summary rows new to ``old`` go at the end of its table.
    """
    base, new = parse(old), parse(fresh)
    for title, text in new.sections.items():
        base.sections[title] = text
    for column in new.columns:
        if column not in base.columns:
            base.columns.append(column)
    for measure, cells in new.summary.items():
        row = base.summary.setdefault(measure, {})
        row.update({column: cell for column, cell in cells.items() if cell != "-"})
    base.preamble = [kept for text in base.preamble if (kept := _without(text, set(new.sections))) is not None]
    names = ", ".join(f"*{title}*" for title in new.sections)
    line = f"{UPDATED}{names}: {stamp}"
    # The header's own "Command:" line is the full run's; each later partial run adds its line after it.
    where = max((i for i, text in enumerate(base.preamble) if text.startswith(("- Command:", UPDATED))),
                default=len(base.preamble) - 1)
    base.preamble.insert(where + 1, line)
    return render(base)


def _without(line: str, titles: set[str]) -> str | None:
    """``line`` (of the header) without ``titles`` if it is an UPDATED line; None if it named only those."""
    if not line.startswith(UPDATED):
        return line
    rest, at, named = line[len(UPDATED):], 0, []
    while (found := _NAMED.match(rest, at)) is not None:
        named.append(found.group(1))
        at = found.end()
        if found.group(2) == ": ":
            break
    left = [title for title in named if title not in titles]
    if len(left) == len(named):
        return line
    if not left:
        return None
    return UPDATED + ", ".join(f"*{title}*" for title in left) + ": " + rest[at:]

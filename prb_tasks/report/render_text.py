"""The short table ``prb compare`` prints in the terminal."""

from __future__ import annotations

from prb_tasks.common.terminal import WIDTH, fit_lines
from prb_tasks.report.build import Report
from prb_tasks.report.formatting import ci, money, pct, short_label, value
from prb_tasks.report.pairwise import ALPHA, CORRECTION
from prb_tasks.report.peruser_tables import per_user_lines
from prb_tasks.report.predicts import predicts_brief
from prb_tasks.report.tables import has_users
from prb_tasks.stats.resampling import UNITS_IN_BRIEF


def text_table(rows: list[list[str]], right: set[int]) -> list[str]:
    """Aligned columns under a header line; columns in ``right`` are right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def narrow_table(rows: list[list[str]], right: set[int], model: int = 1, width: int = WIDTH) -> list[str]:
    """:func:`text_table`, with the model names shortened (:func:`short_label`: their arguments'
    values, long ones cut in the middle) when the table would be wider than a terminal; the names
    shortened beyond their arguments' values follow the table in full, one line each by rank.

    Args:
        rows: header row first; cells as text.
        right: right-aligned columns.
        model: the column of model names.
        width: the most columns a line may take.
    """
    lines = text_table(rows, right)
    excess = max(len(line) for line in lines) - width
    if excess <= 0:
        return lines
    room = max(12, max(len(r[model]) for r in rows[1:]) - excess)
    short = [short_label(r[model], room) for r in rows[1:]]
    lines = text_table([rows[0], *[[*r[:model], name, *r[model + 1:]] for r, name in zip(rows[1:], short)]], right)
    # A shortened name may no longer say which server or settings a row ran with: each in full, by its rank.
    cut = [r for r, name in zip(rows[1:], short) if name != short_label(r[model], len(r[model]))]
    return lines + fit_lines([f"model #{r[0]}: {r[model]}" for r in cut], width)


def render_text(report: Report) -> str:
    """One ranked table per section (notes go to stderr, see :func:`compare.run_command`)."""
    if not report.sections:
        return "prb compare: no results of prb tasks found (run prb eval with --output_path DIR --log_samples)"
    lines: list[str] = []
    for section in report.sections:
        by_id = {s.id: s for s in section.summaries}
        rank_of = {r.id: r.rank for r in section.ranking}
        head = f"{section.title}: {len(section.summaries)} model(s)"
        if section.set_apart:
            head += f" ({len(section.set_apart)} not ranked, below)"
        if section.union:
            head += f", {section.shared_all} of {section.union} pairs shared by all"
        lines += fit_lines([head + (" [DIAGNOSTIC: oracle aspects shown]" if section.diagnostic else "")])
        users = has_users(section.summaries)
        rows = [["#", "model", "kind", "pairs", "acc %", "95% CI", "macro %", *(["per-user %"] if users else []),
                 "resampled", "$/1k pairs", "better than"]]
        for r in section.ranking:
            s = by_id[r.id]
            rows.append([
                str(r.rank), s.label, s.kind, str(s.pairs) if s.pairs else "-", pct(s.acc.value if s.acc else None),
                ci(s.acc), pct(s.acc_macro.value if s.acc_macro else None),
                *([pct(s.acc_user.value if s.acc_user else None)] if users else []), s.resampled or "-",
                money(s.cost.usd_per_1k_pairs, s.cost.partial),
                ", ".join(f"#{rank_of[x]}" for x in sorted(r.better_than, key=rank_of.__getitem__)) or "-",
            ])
        right = {0, 3, 4, 6, 7, 9} if users else {0, 3, 4, 6, 8}
        lines += narrow_table(rows, right)
        lines += fit_lines([f"not ranked: {by_id[i].label} (acc {pct(value(by_id[i].acc))}%): {why}"
                            for i, why in section.set_apart.items()])
        lines += per_user_lines(section.per_user)
        from prb_tasks.report.gap_split import gap_lines

        lines += fit_lines(gap_lines(section))
        lines += [""]
    for ladder in report.ladders:
        steps = " -> ".join(f"{r.name} {pct(r.acc.value if r.acc else None)}" for r in ladder.rungs)
        lines += fit_lines([f"ladder {ladder.label} ({ladder.pairs} shared pairs): {steps}"])
    if report.ladders:
        lines.append("")
    if report.predicts is not None:
        lines += fit_lines(predicts_brief(report.predicts))
        lines.append("")
    # Sentences are wrapped by words to a terminal's 120 columns; the tables' rows are not.
    lines += fit_lines([f"better than: paired test on shared pairs, {CORRECTION}-corrected, alpha {ALPHA}; "
                        f"intervals and tests resample the unit in 'resampled': {UNITS_IN_BRIEF}"])
    return "\n".join(lines)

"""``report.md``: every table of the report as Markdown."""

from __future__ import annotations

from prb_tasks.report.build import Report
from prb_tasks.report.pairwise import ALPHA, CORRECTION
from prb_tasks.report.peruser_tables import per_user_tables
from prb_tasks.report.predicts import predicts_lines
from prb_tasks.report.tables import Table, ladder_table, section_tables
from prb_tasks.stats.clusters import EXACT_USERS, SIGN_FLIPS
from prb_tasks.stats.pairs import ITERS, SEED

HOW_TO_READ = [
    "acc: share of judgments that favour the user's chosen response, averaged per pair (a pair judged in both "
    "orders scores 0, 1/2 or 1); macro: the plain mean of the subsets.",
    f"95% CI: percentile bootstrap ({ITERS} draws, seed {SEED}) resampling the unit named in 'resampled'. Pairs: "
    "whole pairs within each subset (the two orders of a pair share its content and are not independent evidence). "
    "Users, where the data names them (PersonalLLM, your own data): whole users with all their pairs, since one "
    "user's pairs are not independent either; resampling pairs there would give intervals that are too narrow.",
    "per-user: each user's accuracy averaged over users, so a user with many pairs counts as much as one with few.",
    f"better than: a paired test on the pairs both models share, {CORRECTION}-corrected over all comparisons in "
    f"the section, alpha {ALPHA}. By pairs: exact McNemar test (for both-order judges, whose pairs score 0, 1/2 or "
    f"1, its exact sign-flip generalisation). By users: sign-flip test of each user's summed difference (exact "
    f"up to {EXACT_USERS} users, else {SIGN_FLIPS} seeded random flips). A difference without a mark may be noise, "
    "however large it looks.",
    "double game: JudgeBench's robustness score for judges seen in both orders: +1 per order naming the chosen "
    "answer, -1 per order naming the other; the share of pairs netting above 0 (an order-inconsistent pair "
    "scores nothing).",
    "kappa: Cohen's kappa of per-pair outcomes (right in every order / split / wrong); 1 = identical behaviour.",
    "Oracle rows show the judge the user's rubric aspects: a diagnostic upper bound, not a leaderboard number.",
]


def md_text(text: str) -> str:
    """``text`` (a model name, a path, a note) safe to put in Markdown: what renderers
    would take as HTML (``<script>``, ``<img onerror=...>``, entities) is shown as text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return md_text(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> list[str]:
    lines = [f"**{md_text(table.title)}**" + (f" ({md_text(table.more)})" if table.more else ""), "",
             "| " + " | ".join(_cell(h) for h in table.head) + " |", "|" + "---|" * len(table.head)]
    lines += ["| " + " | ".join(_cell(c[0]) for c in row) + " |" for row in table.rows]
    return lines + [""]


def render_markdown(report: Report) -> str:
    """The whole report as one Markdown document."""
    lines = ["# prb compare", "", f"Generated {report.generated} from {md_text(', '.join(report.inputs))}.", "",
             "How to read it:", "", *[f"- {line}" for line in HOW_TO_READ], ""]
    if not report.sections:
        lines.append("No results of prb tasks were found.")
    for section in report.sections:
        lines += [f"## {md_text(section.title)}", ""]
        if section.diagnostic:
            lines += ["**Diagnostic:** the judge saw the user's rubric aspects (the scoring standard). "
                      "An upper bound, never a leaderboard number.", ""]
        if section.union:
            lines += [f"{section.shared_all} of {section.union} pairs are shared by all models with sample logs.", ""]
        for table in section_tables(section):
            lines += markdown_table(table)
        for table in per_user_tables(section.per_user):
            lines += markdown_table(table)
        lines += [f"- {md_text(n)}" for n in (section.per_user.notes if section.per_user else [])]
        for title, path in report.charts.get(section.slug, []):
            lines += [f"![{md_text(title)}]({md_text(path)})", ""]
    if report.ladders:
        lines += ["## Ladders: one model across variants, on the pairs all its variants share", ""]
        for ladder in report.ladders:
            lines += markdown_table(ladder_table(ladder))
    if report.predicts is not None:
        lines += ["## How much accuracy predicts", "", *[f"- {md_text(n)}" for n in predicts_lines(report.predicts)],
                  ""]
    if report.notes:
        lines += ["## Notes", "", *[f"- {md_text(n)}" for n in report.notes], ""]
    return "\n".join(lines)

"""The tables of a report, shared by ``report.md`` and ``report.html``.

A cell is (text, sort key); the HTML report sorts a column by its keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.report.build import Section
from prb_tasks.report.formatting import ci, known, money, number, p_value, pct, short_label, signed_pts, value
from prb_tasks.report.ladder import Ladder
from prb_tasks.report.pairwise import CORRECTION
from prb_tasks.report.source import describe
from prb_tasks.report.summary import Summary
from prb_tasks.stats.pairs import Interval

_SHORT = {s.config: s.short for s in SUBSETS}
MAX_GROUPS = 20

Cell = tuple[str, float | str | None]


@dataclass
class Table:
    """A titled table; ``more`` says what was left out."""

    title: str
    head: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    more: str = ""


def short_subset(name: str) -> str:
    """``Art_and_Entertainment`` -> ``art``; other names unchanged."""
    return _SHORT.get(name, name)


def _p(x: float | None, digits: int = 1) -> Cell:
    return pct(x, digits), (x if known(x) else None)


def _t(text: str) -> Cell:
    return text, text


def _n(x: float | None, digits: int = 2) -> Cell:
    return number(x, digits), (x if known(x) else None)


def subset_names(section: Section) -> list[str]:
    names: list[str] = []
    for s in section.summaries:
        names += [g.value for g in s.subsets if g.value not in names]
    return names


def _ci(interval: Interval | None) -> Cell:
    return ci(interval), interval.low if interval and known(interval.low) else None


def has_users(summaries: list[Summary]) -> bool:
    """Whether any model's data names its users (then per-user accuracy is shown)."""
    return any(s.acc_user is not None for s in summaries)


def ranking_table(section: Section) -> Table:
    by_id = {s.id: s for s in section.summaries}
    rank_of = {r.id: r.rank for r in section.ranking}
    subsets = subset_names(section)
    users = has_users(section.summaries)
    test = "user sign-flip" if any(c.resampled.endswith(" users") for c in section.comparisons) else "McNemar"
    table = Table("Ranking", ["#", "model", "kind", "backend", "pairs", "acc %", "95% CI", "macro %", "macro CI",
                              *(["per-user %", "per-user CI"] if users else []), "resampled",
                              *[short_subset(n) for n in subsets], f"better than ({test}, {CORRECTION})"])
    for r in section.ranking:
        s = by_id[r.id]
        per = {g.value: g for g in s.subsets}
        table.rows.append([
            (str(r.rank), r.rank), _t(s.label), _t(s.kind), _t(s.backend), (str(s.pairs or "-"), s.pairs),
            _p(value(s.acc)), _ci(s.acc), _p(value(s.acc_macro)), _ci(s.acc_macro),
            *([_p(value(s.acc_user)), _ci(s.acc_user)] if users else []), _t(s.resampled or "-"),
            *[_p(per[n].acc) if n in per else ("-", None) for n in subsets],
            _t(", ".join(f"#{rank_of[x]}" for x in sorted(r.better_than, key=rank_of.__getitem__)) or "-"),
        ])
    return table


def set_apart_table(section: Section) -> Table | None:
    """The runs left out of the ranking, each with why (a large share skipped or failed)."""
    if not section.set_apart:
        return None
    by_id = {s.id: s for s in section.summaries}
    table = Table("Not ranked: runs with many judgments skipped or failed", ["model", "pairs", "acc %", "why"])
    table.rows = [[_t(by_id[i].label), (str(by_id[i].pairs or "-"), by_id[i].pairs), _p(value(by_id[i].acc)), _t(why)]
                  for i, why in section.set_apart.items()]
    return table


JUDGE_METRICS = ("acc_pair", "consistency", "double_game", "pos_a_rate", "acc_pos_a", "acc_pos_b", "pos_bias",
                 "parse_fail", "error_rate", "skip_rate")


def judge_table(summaries: list[Summary]) -> Table | None:
    judges = [s for s in summaries if s.kind == "judge"]
    if not judges:
        return None
    table = Table("Judges (%): pairs right in both orders, consistency, position and failures",
                  ["model", *JUDGE_METRICS])
    table.rows = [[_t(s.label), *[_p(s.metrics.get(n)) for n in JUDGE_METRICS]] for s in judges]
    return table


def double_game_table(summaries: list[Summary]) -> Table | None:
    """JudgeBench's double-game score of each both-order judge, overall and per subset."""
    judges = [s for s in summaries if s.double_game is not None]
    if not judges:
        return None
    subsets = list(dict.fromkeys(g.value for s in judges for g in s.double_game_subsets))
    table = Table("Double-game score % (JudgeBench: +1 per order naming the chosen answer, -1 per order naming "
                  "the other; share of pairs netting above 0, so an order-inconsistent pair scores nothing)",
                  ["model", "double game %", "95% CI", "resampled",
                   *[h for n in subsets for h in (short_subset(n), "CI")]])
    for s in judges:
        per = {g.value: g for g in s.double_game_subsets}
        cells: list[Cell] = []
        for n in subsets:
            g = per.get(n)
            cells += [_p(g.acc), _ci(Interval(g.acc, g.low, g.high)
                                     if g.low is not None and g.high is not None else None)] if g else \
                [("-", None), ("-", None)]
        table.rows.append([_t(s.label), _p(value(s.double_game)), _ci(s.double_game), _t(s.resampled or "-"),
                           *cells])
    return table


def scalar_table(summaries: list[Summary]) -> Table | None:
    rms = [s for s in summaries if s.kind == "scalar"]
    if not rms:
        return None
    table = Table("Scalar RMs: ties and scores", ["model", "tie_rate %", "mean chosen", "mean rejected", "mean gap"])
    table.rows = [[_t(s.label), _p(s.metrics.get("tie_rate")), _n(s.metrics.get("mean_chosen"), 3),
                   _n(s.metrics.get("mean_rejected"), 3), _n(s.metrics.get("mean_gap"), 3)] for s in rms]
    return table


def length_table(summaries: list[Summary]) -> Table | None:
    rows = [[_t(s.label), _p(s.metrics.get("picks_longer")), _p(s.metrics.get("acc_chosen_longer")),
             _p(s.metrics.get("acc_chosen_shorter"))] for s in summaries if s.logged]
    if not rows:
        return None
    return Table("Length bias (50 = none; accuracy when the chosen response is the longer / the shorter one)",
                 ["model", "picks longer %", "acc, chosen longer %", "acc, chosen shorter %"], rows)


def cost_table(summaries: list[Summary]) -> Table | None:
    rows = [[_t(s.label), (money(s.cost.usd_per_1k_pairs, s.cost.partial), s.cost.usd_per_1k_pairs),
             _n(s.cost.input_tokens_per_call, 0), _p(s.cost.prompt_cached_share), _n(s.cost.output_tokens_per_call, 0),
             _n(s.cost.latency_p50), _n(s.cost.latency_p90)]
            for s in summaries if s.kind == "judge" and s.logged]
    if not any(r[1][1] is not None or r[2][1] is not None for r in rows):
        return None
    return Table("Cost and speed (prb-judge usage files; $ include cached answers at their original price, "
                 "+ = some calls had no price)",
                 ["model", "$ per 1,000 pairs", "tokens in / call", "in from prompt cache %", "tokens out / call",
                  "latency p50 s",
                  "latency p90 s"], rows)


def comparison_table(section: Section) -> Table | None:
    if not section.comparisons:
        return None
    label = {s.id: s.label for s in section.summaries}
    table = Table("Pairwise, on shared pairs (difference = first - second, in points)",
                  ["first", "second", "shared pairs", "resampled", "diff", "95% CI",
                   "discordant pairs (first / second better)", "p", f"p ({CORRECTION})", "significant"])
    for c in section.comparisons:
        d = value(c.diff)
        table.rows.append([
            _t(label[c.first]), _t(label[c.second]), (str(c.shared), c.shared), _t(c.resampled or "-"),
            (signed_pts(d), d), (ci(c.diff, signed=True), c.diff.low if c.diff else None),
            (f"{c.first_better} / {c.second_better}", c.first_better - c.second_better),
            (p_value(c.p_value), c.p_value), (p_value(c.p_adjusted), c.p_adjusted),
            _t("yes" if c.significant else "no"),
        ])
    return table


def kappa_table(section: Section) -> Table | None:
    logged = [s for s in section.summaries if s.logged]
    if len(logged) < 2:
        return None
    table = Table("Agreement: Cohen's kappa of per-pair outcomes on shared pairs",
                  ["model", *[short_label(s.label, 24) for s in logged]])
    table.rows = [[_t(s.label), *[_n(k) for k in section.kappa[i]]] for i, s in enumerate(logged)]
    return table


def breakdown_tables(section: Section, limit: int | None = MAX_GROUPS) -> list[Table]:
    logged = [s for s in section.summaries if s.logged]
    tables = []
    for name in sorted({f for s in logged for f in s.breakdowns}):
        sizes: dict[str, int] = {}
        accs: dict[tuple[str, str], float] = {}
        for s in logged:
            for g in s.breakdowns.get(name, []):
                sizes[g.value] = max(sizes.get(g.value, 0), g.pairs)
                accs[(s.id, g.value)] = g.acc
        values = sorted(sizes, key=lambda v: (-sizes[v], v))
        shown = values if limit is None else values[:limit]
        more = (f"largest {limit} of {len(values)}; all in report.json and report.html"
                if len(shown) < len(values) else "")
        table = Table(f"Accuracy % per {name}", [name, "pairs", *[short_label(s.label, 24) for s in logged]], more=more)
        table.rows = [[_t(v), (str(sizes[v]), sizes[v]), *[_p(accs.get((s.id, v))) for s in logged]] for v in shown]
        tables.append(table)
    return tables


def main_tables(section: Section) -> list[Table]:
    """The tables of a section other than the breakdowns, in reading order."""
    parts = [ranking_table(section), set_apart_table(section), judge_table(section.summaries),
             double_game_table(section.summaries), scalar_table(section.summaries),
             length_table(section.summaries), cost_table(section.summaries), comparison_table(section),
             kappa_table(section), gap_table(section)]
    return [t for t in parts if t is not None]


def gap_table(section: Section) -> Table | None:
    """Judges' consistency and position bias where quality is equal vs clear (:mod:`prb_tasks.report.gap_split`)."""
    from prb_tasks.report.gap_split import gap_table_rows

    found = gap_table_rows(section)
    if found is None:
        return None
    title, head, rows = found
    table = Table(title, head)
    table.rows = [[_t(row[0]), *[(cell, float(cell) / 100 if cell != "-" else None) for cell in row[1:]]]
                  for row in rows]
    return table


def section_tables(section: Section, limit: int | None = MAX_GROUPS) -> list[Table]:
    """Every table of a section, breakdowns last."""
    return main_tables(section) + breakdown_tables(section, limit)


def ladder_table(ladder: Ladder) -> Table:
    resampled = f", intervals and tests resample {ladder.resampled}" if ladder.resampled else ""
    table = Table(f"{ladder.label} ({ladder.kind}, {describe(ladder.source)}, {ladder.pairs} shared pairs{resampled})",
                  ["setting", "task", "acc %", "95% CI", "gain vs first", "95% CI", "p"])
    for r in ladder.rungs:
        g = value(r.gain)
        table.rows.append([_t(r.name), _t(r.family), _p(value(r.acc)), (ci(r.acc), value(r.acc)),
                           (signed_pts(g), g), (ci(r.gain, signed=True), g), (p_value(r.p_value), r.p_value)])
    return table

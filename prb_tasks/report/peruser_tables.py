"""The per-user blocks as tables (report.md, report.html) and short lines (the terminal).

Each block's title says what was resampled and how many times; the statistics are
:mod:`prb_tasks.stats.peruser`, assembled per section by :mod:`prb_tasks.report.peruser`.
"""

from __future__ import annotations

from prb_tasks.common.terminal import fit_lines
from prb_tasks.report.formatting import ci, known, number, p_value, pct, short_label, signed_pts, value
from prb_tasks.report.peruser import MIN_GROUP_USERS, PerUser
from prb_tasks.report.tables import Cell, Table
from prb_tasks.stats.pairs import Interval
from prb_tasks.stats.peruser import DECILE


def _p(x: float | None) -> Cell:
    return pct(x), (x if known(x) else None)


def _t(text: str) -> Cell:
    return text, text


def _ci(interval: Interval | None, signed: bool = False) -> Cell:
    return ci(interval, signed=signed), (interval.low if interval and known(interval.low) else None)


def _n(x: int) -> Cell:
    return str(x), x


def tau_ci(interval: Interval | None) -> str:
    """A correlation's interval: ``0.12 to 0.45`` (``-`` without one)."""
    if interval is None or not known(interval.low):
        return "-"
    return f"{interval.low:.2f} to {interval.high:.2f}"


def distribution_table(block: PerUser) -> Table:
    """Block 1: per model, the median user, the worst decile and the share below chance."""
    too_few = max((m.spread.too_few for m in block.spreads), default=0)
    more = (f"users with fewer than {block.min_pairs} pairs are counted apart ('too few'); intervals: "
            f"{block.iters} resamples of the counted users, seed {block.seed}")
    table = Table("Per-user accuracy: the distribution, not only the mean", [
        "model", "users", f"too few (< {block.min_pairs} pairs)", "median user %", "95% CI",
        f"worst {DECILE:.0%} of users %", "95% CI", f"below chance ({pct(block.chance, 0)}%) %", "95% CI",
        "resampled"], more=more)
    for m in block.spreads:
        s = m.spread
        table.rows.append([_t(m.label), _n(s.users), _n(s.too_few), _p(value(s.median)), _ci(s.median),
                           _p(value(s.worst_decile)), _ci(s.worst_decile), _p(value(s.below_chance)),
                           _ci(s.below_chance), _t(s.resampled)])
    if too_few and not any(m.spread.users for m in block.spreads):
        table.more += f"; every user has fewer than {block.min_pairs} pairs: nothing to say per user"
    return table


def helped_table(block: PerUser) -> Table | None:
    """Block 2: users helped / hurt / level beside the non-personalized counterpart, overall and per group."""
    if not block.helped:
        return None
    table = Table("Who is helped: each personalized model against its non-personalized counterpart", [
        "model", "against", "group", "users", "helped %", "hurt %", "level %", "mean diff (pts)", "95% CI",
        "sign test p", "p (Holm over groups)"],
        more=("per user: accuracy minus the counterpart's on the user's shared pairs; helped / hurt / level: "
              "above / below / at 0; exact two-sided sign test of helped against hurt (level users left out); "
              f"groups of fewer than {MIN_GROUP_USERS} users left out; "
              f"interval: {block.iters} resamples of the users, seed {block.seed}"))
    for h in block.helped:
        rows = [("all users", h.split)] + [(f"{g.field} = {g.value}", g.split) for g in h.groups]
        for name, s in rows:
            d = value(s.mean_diff)
            table.rows.append([
                _t(h.label), _t(f"{h.counterpart_label} ({h.counterpart_is})"), _t(name), _n(s.users),
                _p(s.share("helped")), _p(s.share("hurt")), _p(s.share("level")),
                (signed_pts(d), d), _ci(s.mean_diff, signed=True), (p_value(s.p_value), s.p_value),
                (p_value(s.p_adjusted), s.p_adjusted) if s.p_adjusted is not None else ("-", None)])
    return table


def agreement_table(block: PerUser) -> Table | None:
    """Block 3: each user's ranking of the models against the aggregate ranking."""
    a = block.agreement
    if a is None:
        return None
    floor = f"in under {a.noise_level:.0%} of {a.noise_iters} resamples of the user's own pairs"
    table = Table(f"Whose ranking differs: each user's ranking of the {a.models} models against the aggregate", [
        "measure", "value", "95% CI", "what was resampled"],
        more=(f"{a.users} users with a ranking on the {block.agreement_pairs} pairs all models share"
              + (f"; {a.all_tied} users left out, every model tied on their pairs" if a.all_tied else "")
              + "; published: 0.04 mean over 115 Chatbot Arena users, 57% near zero or negative "
              "(Personalized Benchmarking, ACL Findings 2026)"))
    users = f"{a.users} users, {a.iters} resamples"
    table.rows = [
        [_t("mean Kendall tau-b, user vs aggregate ranking"), (number(value(a.mean_tau)), value(a.mean_tau)),
         (tau_ci(a.mean_tau), a.mean_tau.low if a.mean_tau else None),
         _t(users + " (aggregate held fixed)")],
        [_t("users with tau <= 0 (no agreement or reversed) %"), _p(a.tau_at_most_zero), ("-", None),
         _t("none (observed)")],
        [_t(f"... beyond noise: tau > 0 {floor} %"), _p(a.tau_at_most_zero_beyond_noise), ("-", None),
         _t(f"each user's pairs, {a.noise_iters} times")],
        [_t("users whose best model is not the aggregate best %"), _p(a.best_differs), ("-", None),
         _t("none (observed)")],
        [_t(f"... beyond noise: the aggregate best is their best {floor} %"), _p(a.best_differs_beyond_noise),
         ("-", None), _t(f"each user's pairs, {a.noise_iters} times")],
    ]
    return table


def aggregate_table(block: PerUser) -> Table | None:
    """The aggregate ranking the users are compared with."""
    a = block.agreement
    if a is None:
        return None
    table = Table("Aggregate ranking used above (accuracy on the shared pairs)", ["model", "acc %"])
    order = sorted(range(len(a.aggregate)), key=lambda i: -a.aggregate[i])
    table.rows = [[_t(block.agreement_models[i]), _p(a.aggregate[i])] for i in order]
    return table


def per_user_tables(block: PerUser | None) -> list[Table]:
    """Blocks 1-3 of a section (empty without users)."""
    if block is None:
        return []
    parts = [distribution_table(block), helped_table(block), agreement_table(block), aggregate_table(block)]
    return [t for t in parts if t is not None]


def per_user_lines(block: PerUser | None) -> list[str]:
    """A few sentences for the terminal (wrapped to its width)."""
    if block is None:
        return []
    lines = []
    for m in block.spreads:
        s = m.spread
        if not s.users:
            lines.append(f"per user, {short_label(m.label, 40)}: every user has fewer than {s.min_pairs} pairs")
            continue
        lines.append(f"per user, {short_label(m.label, 40)}: median {pct(value(s.median))}% ({ci(s.median)}), "
                     f"worst {DECILE:.0%} {pct(value(s.worst_decile))}%, below chance {pct(value(s.below_chance))}% "
                     f"of {s.users} users ({s.too_few} with < {s.min_pairs} pairs apart; {s.iters} resamples of users)")
    for h in block.helped:
        sp = h.split
        lines.append(f"helped: {short_label(h.label, 40)} vs {short_label(h.counterpart_label, 40)}: helps "
                     f"{pct(sp.share('helped'))}%, hurts {pct(sp.share('hurt'))}%, level {pct(sp.share('level'))}% "
                     f"of {sp.users} users (sign test p {p_value(sp.p_value)})")
        for g in h.groups:
            if g.split.p_adjusted is not None and g.split.p_adjusted < 0.05:
                lines.append(f"  {g.field} = {g.value}: helps {pct(g.split.share('helped'))}%, hurts "
                             f"{pct(g.split.share('hurt'))}% of {g.split.users} users "
                             f"(p Holm {p_value(g.split.p_adjusted)})")
    a = block.agreement
    if a is not None and a.users:
        lines.append(f"rankings: mean tau user vs aggregate {number(value(a.mean_tau))} ({tau_ci(a.mean_tau)}, "
                     f"{a.users} users resampled); best model differs for {pct(a.best_differs)}% of users, "
                     f"{pct(a.best_differs_beyond_noise)}% beyond the noise of their own pairs "
                     f"({a.noise_iters} resamples each)")
    lines += [f"per user: {n}" for n in block.notes]
    return fit_lines(lines)

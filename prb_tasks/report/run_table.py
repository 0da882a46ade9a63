"""The one compact table ``prb eval`` prints instead of lm-eval's two long ones.

lm-eval prints every metric of every task and group as its own row, and then the
group rows again: 11 metrics x 4 rows for one judge run. A person wants, per row,
the accuracy with an interval, the macro mean and the two or three numbers that say
whether the run can be trusted (position consistency, parse failures, ties). This
module picks those from the results; ``prb eval --full_tables`` prints lm-eval's own.

Intervals: with ``--log_samples`` the samples are at hand, so the interval is a
bootstrap over *pairs* within each subset (a judge's two orders of one pair are
resampled together, as ``prb compare`` does); without them it is lm-eval's standard
error times 1.96, which counts a judge's two orders as independent (too narrow).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any

import numpy as np

from prb_tasks.common.terminal import WIDTH, fit_lines

#: Metrics worth a column, in order; a column appears when some row reports the metric.
HEADLINE = ("acc_macro", "acc_user", "acc_tag", "acc_pair", "consistency", "double_game", "pos_a_rate", "pos_bias",
            "soft_acc", "ece",
            "acc_official", "tie_rate", "parse_fail", "plan_recall", "plan_precision", "plan_empty",
            # PersonalRewardBench's official computations (scoring/personal_reward_bench.py).
            "acc_synthesizeme", "acc_pgenrm", "kept_pgenrm",
            # Best-of-N on Personalized RewardBench (prb_tasks/scoring/bestofk.py), at k = N.
            "bon_gold", "bon_gain", "bon_top", "ungraded", "gold", "grade_unparsed", "candidate_words",
            "failed_candidate",
            # General RM benchmarks: RewardBench 2 (scoring/rewardbench2.py), RM-Bench (scoring/rmbench.py).
            "score", "top1", "easy_acc", "normal_acc", "hard_acc")
#: Values on their own scale (rewards, 0-2 grades, words), not shares shown in percent.
_NOT_SHARES = ("bon_reward", "bon_regret", "plan_size", "bon_gold", "bon_gain", "gold", "candidate_words")
#: Failures shown only when they happened: a column of zeros says nothing.
IF_NONZERO = ("error_rate", "skip_rate")
#: Best-of-N metrics carry their N; the largest N is the headline.
BON = ("bon_reward", "bon_regret", "bon_win_random", "bon_win_popular")
FULL_TABLES_FLAG = "--full_tables"
#: In the metrics :func:`compact_lines` shows: the count column counts items, not pairs.
ITEMS_MARK = "_items"
#: ... and judge ratings (a document per response rated), not items.
RATINGS_MARK = "_ratings"
#: ... and what a model wrote, one request each (a Best-of-N policy's N candidates per question).
REPLIES_MARK = "_replies"
#: ... and judge calls of RM-Bench style pairs (18 per prompt), perhaps beside ratings.
JUDGMENTS_MARK = "_judgments"


def _value(row: dict[str, Any], metric: str) -> float | None:
    value = row.get(f"{metric},none")
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def _rows(results: dict[str, Any], ours: set[str]) -> list[tuple[str, str, list[str]]]:
    """(name shown, task or group name, its leaf tasks) in reading order: groups, then their members."""
    table = results.get("results") or {}
    tree = {k: list(v or []) for k, v in (results.get("group_subtasks") or {}).items()}
    members = {t for subs in tree.values() for t in subs}
    rows: list[tuple[str, str, list[str]]] = []

    def leaves(name: str) -> list[str]:
        subs = tree.get(name) or []
        return [leaf for s in subs for leaf in leaves(s)] if subs else [name]

    def add(name: str, depth: int) -> None:
        if name in table:
            alias = str(table[name].get("alias") or name).strip(" -") if depth else name
            rows.append(("  " * depth + alias, name, leaves(name)))
        for sub in tree.get(name) or []:
            add(sub, depth + 1)

    for name in table:
        if name in ours and name not in members:
            add(name, 0)
    return rows


def _pair_scores(samples: list[dict[str, Any]]) -> np.ndarray:
    """Per pair, the share of its documents scored right (a judge's two orders are one pair)."""
    by_pair: dict[str, list[float]] = defaultdict(list)
    for sample in samples:
        doc = sample.get("doc")
        if not isinstance(doc, dict):
            doc = {}
        key = str(doc.get("pair_key") or sample.get("doc_id"))
        if isinstance(sample.get("acc"), (int, float)):
            by_pair[key].append(float(sample["acc"]))
    return np.array([sum(v) / len(v) for v in by_pair.values()], dtype=float)


def _interval(row: dict[str, Any], tasks: list[str], samples: dict[str, list[dict[str, Any]]] | None
              ) -> tuple[str, int | None]:
    """The 95% interval of ``acc`` as text, and the number of pairs it rests on (None: unknown)."""
    from prb_tasks.stats.pairs import bootstrap

    if samples and all(t in samples for t in tasks):
        strata = [_pair_scores(samples[t]) for t in tasks]
        interval = bootstrap(strata)
        if interval is not None:
            return f"{100 * interval.low:.1f}-{100 * interval.high:.1f}", sum(len(s) for s in strata)
    acc, stderr = _value(row, "acc"), _value(row, "acc_stderr")
    if acc is None or stderr is None:
        return "-", None
    return f"{100 * max(acc - 1.96 * stderr, 0):.1f}-{100 * min(acc + 1.96 * stderr, 1):.1f}*", None


def _columns(results: dict[str, Any], names: list[str]) -> list[str]:
    table = results.get("results") or {}
    rows = [table[n] for n in names]
    present = [m for m in HEADLINE if any(_value(r, m) is not None for r in rows)]
    if all(_value(r, "consistency") is not None for r in rows if _value(r, "pos_bias") is not None):
        # With both orders, consistency and pos_a_rate already say it; single-order rows need it.
        present = [m for m in present if m != "pos_bias"]
    present += [m for m in IF_NONZERO if any((_value(r, m) or 0) > 0 for r in rows)]
    for base in BON:
        sizes = [int(m.group(1)) for r in rows for k in r if (m := re.fullmatch(rf"{base}_n(\d+),.*", k))]
        if sizes:
            present.append(f"{base}_n{max(sizes)}")
    return present


def _cell(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    # Best-of-N rewards and regrets are normalised rewards, not shares.
    return f"{value:.3f}" if metric.startswith(_NOT_SHARES) else f"{100 * value:.1f}"


def _header(metric: str) -> str:
    if metric.startswith(_NOT_SHARES):
        return metric
    return f"{metric} %"


def compact_lines(results: dict[str, Any], ours: set[str],
                  samples: dict[str, list[dict[str, Any]]] | None = None) -> tuple[list[str], list[str]]:
    """The compact table of a run's prb tasks, and the metrics it shows (for the legend).

    Args:
        results: what ``lm_eval.simple_evaluate`` returned.
        ours: names of prb tasks and groups; other tasks are left to lm-eval's tables.
        samples: task -> logged samples (``--log_samples``), for intervals over pairs.
    """
    rows = _rows(results, ours)
    if not rows:
        return [], []
    table = results.get("results") or {}
    # Tasks scored over pairs (acc) and tasks scored over items (RewardBench 2, RM-Bench, Best-of-N)
    # have different columns: a run of both gets a table for each, so neither is as wide as both.
    blocks: list[list[tuple[str, str, list[str]]]] = []
    for row in rows:
        if not row[0].startswith(" ") or not blocks:
            blocks.append([])
        blocks[-1].append(row)
    pairwise = [r for b in blocks if any(_value(table[n], "acc") is not None for _, n, _ in b) for r in b]
    items = [r for r in rows if r not in pairwise]
    if not pairwise or not items:
        return _compact_table(results, rows, samples)
    first, first_shown = _compact_table(results, pairwise, samples)
    second, second_shown = _compact_table(results, items, samples)
    shown = list(dict.fromkeys(m for m in first_shown + second_shown if m != "_starred"))
    return first + second, shown + (["_starred"] if "_starred" in first_shown + second_shown else [])


def _compact_table(results: dict[str, Any], rows: list[tuple[str, str, list[str]]],
                   samples: dict[str, list[dict[str, Any]]] | None) -> tuple[list[str], list[str]]:
    """One compact table of ``rows`` (see ``compact_lines``) and the metrics it shows."""
    table = results.get("results") or {}
    counts = results.get("n-samples") or {}
    columns = _columns(results, [name for _, name, _ in rows])
    # Best-of-N, RewardBench 2 and RM-Bench rows score items (a question with all its responses), not
    # pairs, and have no acc: a run of only such rows counts items and shows no acc / interval columns.
    pairwise = any(_value(table[name], "acc") is not None for _, name, _ in rows)
    # A judge that rates responses one at a time (rewardbench2_judge) has a document per response; an
    # RM-Bench judge (rmbench_judge) one per style pair and order.
    configs = results.get("configs") or {}
    generated = [t for _, _, tasks in rows for t in tasks if configs.get(t, {}).get("output_type") == "generate_until"]
    judgments = any(_value(table.get(t) or {}, "easy_acc") is not None for t in generated)
    # A judge's reply is read for a rating (parse_fail counts those it lacked); a policy's reply is an
    # answer, and personalized_rb_bon_sample asks `repeats` of them (its N candidates) per document.
    ratings = bool(generated) and not judgments and all(
        _value(table.get(t) or {}, "parse_fail") is not None for t in generated)
    replies = bool(generated) and not judgments and not ratings
    count_label = "judgments" if judgments else "ratings" if ratings else "replies" if replies else "items"
    body = []
    starred = False
    for shown, name, tasks in rows:
        row = table[name]
        docs = sum(int((counts.get(t) or {}).get("effective") or 0)
                   * (int(configs.get(t, {}).get("repeats") or 1) if replies else 1) for t in tasks)
        if not pairwise:
            body.append([shown, str(docs or "-"), *[_cell(_value(row, m), m) for m in columns]])
            continue
        ci, pairs = _interval(row, tasks, samples)
        starred |= ci.endswith("*")
        body.append([shown, str(pairs if pairs is not None else docs or "-"), _cell(_value(row, "acc"), "acc"), ci,
                     *[_cell(_value(row, m), m) for m in columns]])
    head = (["task", "n" if starred else "pairs", "acc %", "95% CI", *[_header(m) for m in columns]] if pairwise
            else ["task", count_label, *[_header(m) for m in columns]])
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]

    shown_metrics = ["acc", *columns] if pairwise else [
        *columns, JUDGMENTS_MARK if judgments else RATINGS_MARK if ratings else REPLIES_MARK if replies else ITEMS_MARK]
    lines = _folded(head, body, widths)
    from prb_tasks.scoring.fewshot import k_curve_lines

    curves = [c for c in (k_curve_lines(shown.strip(), table[name]) for shown, name, _ in rows) if c]
    lines += [part for curve in curves for part in curve]
    from prb_tasks.scoring.soft_lines import soft_lines

    # Soft verdicts (logprobs=): one block per top-level row (its subsets' numbers are in the results file).
    soft = [part for shown, name, _ in rows if not shown.startswith(" ") for part in soft_lines(shown, table[name])]
    lines += soft
    if samples:  # real people's tasks: by language and country, and the majority baseline
        from prb_tasks.scoring.people import people_lines

        lines += [p for shown, name, _ in rows for p in people_lines(shown.strip(), samples.get(name) or [])]
        from prb_tasks.report.gap_split import eval_gap_lines

        # Where quality is equal: consistency and position bias split by a quality-gap proxy, per top-level row.
        lines += fit_lines([p for shown, name, tasks in rows if not shown.startswith(" ")
                            for p in eval_gap_lines(shown, [x for t in tasks for x in samples.get(t) or []],
                                                    _user_blind(results, tasks))])
    # One line per top-level row (a group's line covers its subsets, whose numbers are above).
    # A sentence, not a row: wrapped by words to 120 columns like the lines under the table.
    lines += fit_lines([p for p in (official_prior_line(shown, table[name], _docs(counts, tasks))
                                    for shown, name, tasks in rows if not shown.startswith(" ")) if p])
    shown_metrics += ["aukc"] if curves else []
    shown_metrics += ["soft_cover", "acc_cov100"] if soft else []
    return lines, shown_metrics + (["_starred"] if starred else [])


def _folded(head: list[str], body: list[list[str]], widths: list[int]) -> list[str]:
    """The table's lines, cut into parts of whole columns when it is wider than a terminal's 120
    columns; each part repeats the first (task) column, so every number keeps its row's name.

    Args:
        head: the column headers.
        body: the rows' cells.
        widths: each column's width.
    """
    parts: list[list[int]] = [[]]
    used = widths[0]
    for column in range(1, len(head)):
        if parts[-1] and used + 2 + widths[column] > WIDTH:
            parts.append([])
            used = widths[0]
        parts[-1].append(column)
        used += 2 + widths[column]
    lines = []
    for part in parts:
        keep = [0, *part]
        for cells in (head, *body):
            lines.append("  ".join(cells[i].ljust(widths[i]) if i == 0 else cells[i].rjust(widths[i])
                                   for i in keep).rstrip())
    return lines


#: Above this share of replies without a verdict the original script could read, acc_official
#: is mostly the position prior: a line beside it says so.
OFFICIAL_UNREAD_SHARE = 0.10


def _user_blind(results: dict[str, Any], tasks: list[str]) -> bool:
    """Whether every task of a row shows the judge the question only (its ``setting`` metadata)."""
    configs = results.get("configs") or {}
    settings = {((configs.get(t) or {}).get("metadata") or {}).get("setting") for t in tasks}
    return settings == {"question"}


def _docs(counts: dict[str, Any], tasks: list[str]) -> int:
    return sum(int((counts.get(t) or {}).get("effective") or 0) for t in tasks)


def official_prior_line(name: str, row: dict[str, Any], judgments: int = 0) -> str | None:
    """The line beside ``acc_official`` when many replies had no verdict the original script
    could read: how many it counted as A, and what an always-A judge scores on the same
    pairs (None when the share is small or the run predates ``always_a_official``).

    Args:
        name: the row's task or group, named in the line.
        row: its results (``acc_official``, ``parse_fail_official``, ``always_a_official``).
        judgments: how many replies the row holds (0: unknown, only the share is given).
    """
    acc, unread, prior = (_value(row, m) for m in ("acc_official", "parse_fail_official", "always_a_official"))
    if acc is None or unread is None or unread <= OFFICIAL_UNREAD_SHARE:
        return None
    count = f"{round(unread * judgments)} of {judgments} replies ({100 * unread:.0f}%)" if judgments else \
        f"{100 * unread:.0f}% of replies"
    floor = f"; a judge that always answers A scores {100 * prior:.1f}% on the same pairs" if prior is not None else ""
    return (f"{name}: acc_official {100 * acc:.1f}% counts {count} as A, having no verdict the original script "
            f"could read{floor}")


def model_line(results: dict[str, Any]) -> str:
    """``prb-judge (model=openai/gpt-4o-mini, ...), limit 10`` without secrets or empty settings."""
    from prb_tasks.report.runs import model_label

    config = results.get("config") or {}
    limit = config.get("limit")
    return model_label(config) + (f", limit {limit:g}" if isinstance(limit, (int, float)) else "")

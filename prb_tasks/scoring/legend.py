"""The short metric legend ``prb eval`` prints under lm-eval's table.

Only metrics that appear in the run's results are explained, with the meaning that
fits the task kind (a judge's ``acc`` counts judgments, a scalar RM's counts pairs).
"""

from __future__ import annotations

from typing import Any

from prb_tasks.scoring import metrics

_JUDGE = {
    "acc": "share of judgments naming the user's chosen answer (unparsed, errors, skipped count wrong)",
    "acc_macro": "in a group row, the plain mean of the subsets (acc there is size-weighted)",
    "acc_pair": "share of pairs judged right in both orders",
    "consistency": "share of pairs where the same answer was preferred in both orders",
    "pos_a_rate": "share of verdicts naming position A; 0.5 is ideal (no position bias), so the table "
                  "shows no arrow: values above and below 0.5 are both biased",
    "parse_fail": "share of replies with no readable verdict",
    "error_rate": "share of judgments whose request failed for good",
    "skip_rate": "share of judgments not sent because max_cost was reached",
    "acc_official": "the original script's reading, where a missing verdict counts as A",
}
_SCALAR = {
    "acc": "share of pairs where the chosen answer scored strictly higher (ties count wrong)",
    "acc_macro": "in a group row, the plain mean of the subsets (acc there is size-weighted)",
    "tie_rate": "share of pairs where both answers got the same score",
}
_STDERR = "+/-: lm-eval's standard error; for intervals over pairs run `prb compare` on --log_samples output"


def _fallback(metric: str, kind: str) -> str | None:
    # Metrics added later may only have a line in scoring.metrics' legends.
    lines = metrics.SCALAR_LEGEND if kind == "scalar" else metrics.JUDGE_LEGEND
    for line in lines:
        if line.startswith(f"{metric}:"):
            return line.split(":", 1)[1].strip()
    return None


def metric_names(task_results: dict[str, Any]) -> list[str]:
    """Metric names in one task's results (``acc,none`` -> ``acc``), in table order."""
    names: list[str] = []
    for key in task_results:
        if "," not in key or key.split(",", 1)[0].endswith("_stderr"):
            continue
        name = key.split(",", 1)[0]
        if name not in names:
            names.append(name)
    return names


def task_kind(config: dict[str, Any]) -> str:
    """``judge`` for generated verdicts, ``scalar`` for scored choices."""
    return "scalar" if config.get("output_type") in ("multiple_choice", "loglikelihood") else "judge"


def legend_lines(results: dict[str, Any], ours: set[str]) -> list[str]:
    """The legend for the metrics ``ours`` tasks and groups report in ``results``.

    Args:
        results: what ``lm_eval.simple_evaluate`` returned.
        ours: names of prb tasks and groups.
    """
    configs = results.get("configs") or {}
    subtasks = results.get("group_subtasks") or {}
    shown: list[tuple[str, str]] = []
    for task, values in (results.get("results") or {}).items():
        if task not in ours:
            continue
        members = subtasks.get(task) or [task]
        kinds = {task_kind(configs.get(m) or {}) for m in members if m in configs} or {"judge"}
        for kind in sorted(kinds):
            for metric in metric_names(values):
                if (kind, metric) not in shown:
                    shown.append((kind, metric))
    if not shown:
        return []

    def place(entry: tuple[str, str]) -> tuple[int, int]:
        kind, metric = entry
        known = list(_SCALAR if kind == "scalar" else _JUDGE)
        return (kind == "scalar", known.index(metric) if metric in known else len(known))

    both = len({kind for kind, _ in shown}) > 1
    lines: list[str] = []
    said: dict[str, str] = {}
    for kind, metric in sorted(shown, key=place):
        meaning = (_SCALAR if kind == "scalar" else _JUDGE).get(metric) or _fallback(metric, kind)
        if meaning is None or said.get(metric) == meaning:
            continue
        said[metric] = meaning
        prefix = f"{metric} ({kind} tasks)" if both and metric in ("acc",) else metric
        lines.append(f"{prefix}: {meaning}")
    return [*lines, _STDERR] if lines else []

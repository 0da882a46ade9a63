"""One line per task whose numbers rest on too little of what the model wrote.

A small or badly prompted model runs every task to the end and gets numbers, but they can
mean nothing: a grader that never wrote ``Aspect i: n`` leaves every Best-of-N question
ungraded, a judge that never names a letter scores 0, a policy that writes nothing gives
empty responses to score. Under ``prb eval``'s table each such task gets ONE line saying
what the output lacked and what to try, e.g.::

    prb: personalized_rb_bon_grade: 0 of 8 grades could be read: the grader never wrote `Aspect i: n` (n = 0, 1 or 2) for every rubric aspect; try a stronger grader, a larger max_tokens, or a grading template of your own (--metadata templates)

The lines read lm-eval's aggregated results only (a share times the task's document
count), so they cost nothing and say the same wherever the results are shown.
"""  # noqa: E501 - the example is one line of output, shown whole

from __future__ import annotations

import math
from typing import Any

#: At least this share of the documents lacking what the task reads earns a line: the
#: numbers then rest on less than half of what was asked (or on nothing).
SHARE = 0.5


def _value(row: dict[str, Any], metric: str) -> float | None:
    value = row.get(f"{metric},none")
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def _count(share: float, n: int | None, what: str, total_word: str = "") -> str:
    """``3 of 8 grades`` when the document count is known, else ``25% of the grades``."""
    if n:
        return f"{round(share * n)} of {n} {what}"
    return f"{100 * share:.0f}% of the {total_word or what}"


def _leaves(name: str, tree: dict[str, list[str]]) -> list[str]:
    subs = tree.get(name) or []
    return [leaf for s in subs for leaf in _leaves(s, tree)] if subs else [name]


def _group_row(row: dict[str, Any], leaves: list[str], table: dict[str, Any],
               counts: dict[str, Any]) -> dict[str, Any]:
    """A group's row with the shares it does not aggregate itself taken from its leaves.

    A group aggregates only the metrics its YAML lists (``rewardbench2_judge``: score), so a
    judge that never wrote a rating shows ``parse_fail`` in every subset but not in the group
    row; without this the group would get no line at all.

    Args:
        row: the group's entry in lm-eval's ``results``.
        leaves: the names of the tasks under it.
        table: lm-eval's ``results`` (where the leaves' rows are).
        counts: lm-eval's ``n-samples`` (each leaf's document count weighs its share).
    """
    merged = dict(row)
    rows = [(table.get(leaf), int((counts.get(leaf) or {}).get("effective") or 0) or 1) for leaf in leaves]
    for key in {k for r, _ in rows if isinstance(r, dict) for k in r if k.endswith(",none")} - set(row):
        got = [(v, w) for r, w in rows if isinstance(r, dict)
               for v in [_value(r, key.removesuffix(",none"))] if v is not None]
        if got:
            merged[key] = sum(v * w for v, w in got) / sum(w for _, w in got)
    return merged


def task_line(name: str, row: dict[str, Any], n: int | None) -> str | None:
    """The line for one results row (a task or group), or None when its numbers stand.

    Args:
        name: the task or group name, as printed.
        row: its entry in lm-eval's ``results``.
        n: how many documents it scored (None: unknown).
    """
    grade = _value(row, "grade_unparsed")
    if grade is not None:  # personalized_rb_bon_grade: one document per candidate
        if grade < SHARE:
            return None
        read = _count(1.0 - grade, n, "grades")
        never = "never wrote" if grade >= 1.0 else "mostly did not write"
        return (f"prb: {name}: {read} could be read: the grader {never} `Aspect i: n` (n = 0, 1 or 2) for every "
                "rubric aspect; try a stronger grader, a larger max_tokens, or a grading template of your own "
                "(--metadata templates)")
    ungraded = _value(row, "ungraded")
    if ungraded is not None and ungraded >= SHARE:  # a Best-of-N contestant
        if ungraded >= 1.0:
            return (f"prb: {name}: no best-of-k numbers: no question has a readable gold grade for every candidate "
                    "(see grade_unparsed in the grading run); try a stronger grader, then run this again")
        return (f"prb: {name}: best-of-k rests on {100 * (1 - ungraded):.0f}% of the questions: the others have "
                "a candidate without a readable gold grade (see the grading run); try a stronger grader")
    unparsed = _value(row, "parse_fail")
    if unparsed is not None and unparsed >= SHARE:
        got = _count(1.0 - unparsed, n, "replies")
        if "bon_gold,none" in row:  # personalized_rb_bon_judge: ratings
            return (f"prb: {name}: {got} gave a readable 1-10 rating; unrated candidates rank last, so best-of-k "
                    "says little about this judge; try a stronger judge or a larger max_tokens")
        if "easy_acc,none" in row:  # rmbench_judge: boxed verdicts
            return (f"prb: {name}: {got} ended with a boxed verdict (\\boxed{{A>B}} and the like); a reply without "
                    "one votes for neither response, so the matrix measures the format more than the judgment; "
                    "try a stronger judge or a larger max_tokens")
        if "score,none" in row:  # rewardbench2_judge: a rating ending the reply
            return (f"prb: {name}: {got} ended with a readable 1-10 rating (a whole number, nothing after it); "
                    "unrated responses never win a row, so the score measures the format more than the judgment; "
                    "try a stronger judge or a larger max_tokens")
        return (f"prb: {name}: {got} named a verdict (`Result: A` or `Result: B`); acc counts the others as "
                "wrong, so it measures the format more than the judgment; try a stronger judge, a larger "
                "max_tokens, or a template that ends with the verdict")
    empty = _value(row, "empty_response")
    if empty is not None and empty >= SHARE:  # personalllm_gen
        return (f"prb: {name}: {_count(empty, n, 'responses')} are empty; their rewards would score silence, not "
                "answers; try --apply_chat_template (an instruct model), a larger max_gen_toks, or another model")
    lost = (_value(row, "empty_candidate") or 0.0) + (_value(row, "failed_candidate") or 0.0)
    if "candidate_words,none" in row and lost >= SHARE:  # personalized_rb_bon_sample
        return (f"prb: {name}: {100 * lost:.0f}% of the candidates are empty or failed; best-of-k over them "
                "compares nothing; try --apply_chat_template, a larger max_gen_toks, or another policy")
    return None


def lacking_lines(results: dict[str, Any], ours: set[str]) -> list[str]:
    """One line per top-level prb task or group of a run whose output lacked what it reads.

    Args:
        results: what ``lm_eval.simple_evaluate`` returned (or a results file's content).
        ours: names of prb tasks and groups; lm-eval's own tasks are left alone.
    """
    table = results.get("results") or {}
    tree = {k: list(v or []) for k, v in (results.get("group_subtasks") or {}).items()}
    members = {t for subs in tree.values() for t in subs}
    counts = results.get("n-samples") or {}
    lines = []
    for name, row in table.items():
        if name not in ours or name in members or not isinstance(row, dict):
            continue
        leaves = _leaves(name, tree)
        n = sum(int((counts.get(t) or {}).get("effective") or 0) for t in leaves) or None
        if name in tree:
            row = _group_row(row, leaves, table, counts)
        line = task_line(name, row, n)
        if line:
            lines.append(line)
    return lines

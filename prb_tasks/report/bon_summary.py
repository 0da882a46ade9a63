"""``prb bon summary RUN...``: the Best-of-N figure the authors report, from prb's runs.

Reads the samples of ``personalized_rb_bon`` runs made with ``--metadata preset official``
(each sample holds the question's subset, the candidates' grades and the RM's reward of
every candidate) and prints, per run, per subset and per k in 1, 2, 4, ..., 128, the
number of questions and the mean and standard deviation of the picks' grades: the table
their ``BoN/evaluate.py`` prints (``--json`` writes their ``evaluation_summary.json``
shape, with min and max). Picks and statistics: :mod:`prb_tasks.replies.bon_official`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from prb_tasks.common.errors import PRBError
from prb_tasks.common.textfiles import json_lines
from prb_tasks.data.bon_files import samples_with_variant
from prb_tasks.replies.bon_official import RULE
from prb_tasks.scoring.bon_official import KSummary, summarize, summary_json

TASK_VARIANT = "bon"


def _files(path: Path) -> list[Path]:
    """The ``personalized_rb_bon`` samples files at ``path`` (a file, or a folder searched recursively)."""
    if not path.exists():
        raise PRBError(f"prb: '{path}' does not exist; give a personalized_rb_bon run's --output_path folder or "
                       "its samples file")
    if path.is_file():
        return [path]
    found = samples_with_variant(path, TASK_VARIANT)
    if not found:
        raise PRBError(f"prb: no personalized_rb_bon samples under '{path}'; run it with --log_samples and "
                       "--metadata preset official first")
    return found


def _rewards(sample: dict[str, Any]) -> list[float]:
    """The RM's reward of each candidate: lm-eval logs one ``(value, is_greedy)`` per choice."""
    raw = sample.get("filtered_resps") or [r[0] if isinstance(r, list) and r else r for r in sample.get("resps") or []]
    return [float(item[0] if isinstance(item, (list, tuple)) else item) for item in raw]


def read_questions(file: Path) -> tuple[list[tuple[str, list[float], list[float]]], int]:
    """Every question of one samples file (subset, rewards, grades), and how many were left out
    for a missing grade (a failed grader request).

    Args:
        file: a ``personalized_rb_bon`` samples file made under ``preset: official``.
    """
    questions: list[tuple[str, list[float], list[float]]] = []
    left_out = 0
    for number, sample in json_lines(file, "samples file", "is the file complete? re-run that evaluation"):
        doc = sample.get("doc") if isinstance(sample, dict) else None
        if not isinstance(doc, dict) or doc.get("variant") != TASK_VARIANT:
            raise PRBError(f"prb: '{file}' line {number} is not a personalized_rb_bon sample")
        if doc.get("rule") != RULE:
            raise PRBError(f"prb: '{file}' was run with preset prb; the authors' summary needs a run with "
                           "--metadata preset official (grades and candidates too)")
        gold = doc.get("gold")
        try:
            rewards = _rewards(sample)
        except (TypeError, ValueError, IndexError):
            raise PRBError(f"prb: '{file}' line {number} holds no rewards (was it run with prb-rm?)") from None
        if not isinstance(gold, list) or len(rewards) != len(gold):
            raise PRBError(f"prb: '{file}' line {number}: {len(rewards)} rewards for "
                           f"{len(gold) if isinstance(gold, list) else 0} grades; is the file complete?")
        if any(g is None for g in gold):
            left_out += 1
            continue
        questions.append((str(doc.get("subset")), rewards, [float(g) for g in gold]))
    return questions, left_out


def format_table(summary: dict[str, list[KSummary]]) -> str:
    """Per subset, one line per k: questions, mean and standard deviation (their layout, plus n)."""
    lines = []
    for subset, rows in summary.items():
        lines += [f"{subset}:", f"  {'k':>4}  {'n':>5}  {'Mean':>8}  {'Std':>8}",
                  f"  {'-' * 4}  {'-' * 5}  {'-' * 8}  {'-' * 8}"]
        lines += [f"  {r.k:>4}  {r.num_examples:>5}  {r.mean_score:>8.4f}  {r.std_score:>8.4f}" for r in rows]
        lines.append("")
    return "\n".join(lines).rstrip()


def run_command(args: argparse.Namespace) -> int:
    """``prb bon summary``: print each run's table; with ``--json FILE`` write them all.

    Args:
        args: ``paths`` (run folders or samples files) and ``json`` (a file or None).
    """
    out: dict[str, Any] = {}
    try:
        files = [file for path in args.paths for file in _files(Path(path))]
        for file in files:
            questions, left_out = read_questions(file)
            summary = summarize(questions)
            print(f"{file}:")
            print(format_table(summary))
            if left_out:
                print(f"({left_out} questions left out: a grader request failed for one of their candidates)")
            print()
            out[str(file)] = summary_json(summary)
        if args.json:
            try:
                Path(args.json).write_text(json.dumps(out if len(out) > 1 else next(iter(out.values())), indent=2),
                                           encoding="utf-8")
            except OSError as exc:
                raise PRBError(f"prb: cannot write --json '{args.json}': {exc.strerror or exc}") from None
            print(f"wrote {args.json}")
    except PRBError as exc:
        print(str(exc).splitlines()[0], file=sys.stderr, flush=True)
        return 2
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0

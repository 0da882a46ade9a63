"""Grade the held-out answers once each, through ``personalized_rb_bon_grade``.

Every policy's answers (the starting policy's and each trained one's) go into one candidates
file, one line per question; ``prb eval --tasks personalized_rb_bon_grade`` grades each
distinct answer once against the row's rubric (prb-judge caches every call, so a re-run, or
a later run with more reward models, grades only the new answers); the grades are read back
by the candidate's text hash, as the Best-of-N contestants read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Optional

from prb_tasks.common.errors import PRBError
from prb_tasks.data.bon_files import load_grades, text_sha

#: Grader's stand-in for an empty answer: the candidates file needs text to hash and grade.
EMPTY = "(no answer)"


def write_candidates(path: Path, answers: dict[str, dict[str, str]], order: list[str]) -> None:
    """One line per question: ``{"pair_key", "candidates": [answer of each policy in order]}``.

    Args:
        path: the file to write.
        answers: policy name -> pair_key -> answer.
        order: the policies, in the order their answers are listed.
    """
    keys = sorted(set.intersection(*(set(answers[name]) for name in order)))
    lines = [json.dumps({"pair_key": key, "candidates": [answers[name][key] or EMPTY for name in order]},
                        ensure_ascii=False) for key in keys]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def run_grader(candidates: Path, out: Path, grader: str, bon_preset: str, data_dir: Optional[str],
               templates: Optional[str],
               evaluate: Callable[[list[str]], int]) -> dict[tuple[str, str], Optional[float]]:
    """Grade ``candidates`` with ``prb-judge`` (``grader``: its ``--model_args``); (pair_key, sha) -> grade.

    Args:
        candidates: the candidates file.
        out: the grading run's ``--output_path``.
        grader: prb-judge model arguments, e.g. ``model=openai/Qwen/Qwen2.5-32B-Instruct,api_base=...``.
        bon_preset: ``prb`` or ``official`` (the authors' grader prompt and reading).
        data_dir: the data the prompts came from.
        templates: the templates folder (the authors' prompts for ``official``).
        evaluate: runs one ``prb eval`` (its arguments; returns the exit status). The command
            line passes its own, so this library code never imports the command line.
    """
    metadata = {"candidates": str(candidates), "preset": bon_preset}
    if data_dir:
        metadata["data_dir"] = data_dir
    if templates:
        metadata["templates"] = templates
    argv = ["--model", "prb-judge", "--model_args", grader, "--tasks", "personalized_rb_bon_grade",
            "--metadata", json.dumps(metadata), "--output_path", str(out), "--log_samples"]
    if bon_preset == "official":
        argv += ["--gen_kwargs", "max_gen_toks=32"]  # their evaluate.py: at most 32 new tokens
    status = evaluate(argv)
    if status != 0:
        raise PRBError(f"prb rl: grading the answers failed (prb eval exit {status}, its line is above); fix the "
                       f"grader and run the same prb rl command again (answers and trained policies are kept)")
    grades = load_grades(str(out), bon_preset)
    if not any(value is not None for value in grades.values()):
        raise PRBError(f"prb rl: none of the {len(grades)} grades in '{out}' could be read; the grader never "
                       "answered in the rubric format: try a stronger grader or a larger max_gen_toks")
    return grades


def grade_of(grades: dict[tuple[str, str], Optional[float]], key: str, answer: str) -> Optional[float]:
    """The grade of one answer (None: not graded or unreadable)."""
    return grades.get((key, text_sha(answer or EMPTY)))

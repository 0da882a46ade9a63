"""Benchmark scores from elsewhere (a leaderboard, a paper) for ``prb validity --scores FILE``.

A small file, model name -> score per benchmark, in one of two forms:

- CSV: a header ``model,<benchmark>,<benchmark>...`` (the first column names the model;
  ``name`` works too), one row per model;
- JSON: ``{"<model>": {"<benchmark>": score, ...}, ...}``.

Scores are numbers (percentages or fractions; correlations do not care). Every problem
is collected and reported as one line each (duplicate names, a score that is not a
number, a row with too few cells), so a user fixes the file in one pass. Matching the
names to the contestants is :mod:`prb_tasks.report.validity_benchmarks`' job.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.common.textfiles import read_text

_NAME_COLUMNS = ("model", "name")


@dataclass(frozen=True)
class PublishedScores:
    """What a scores file holds.

    Attributes:
        path: the file.
        benchmarks: benchmark names in file order.
        scores: model name -> benchmark -> score (a model may lack a benchmark).
    """

    path: Path
    benchmarks: tuple[str, ...]
    scores: dict[str, dict[str, float]]


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().removesuffix("%"))
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _from_csv(path: Path, text: str, problems: list[str]) -> tuple[list[str], list[tuple[int, str, dict]]]:
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise PRBError(f"prb validity: --scores {path} is empty; give a header model,<benchmark>,... and one row "
                       "per model")
    header = [c.strip() for c in rows[0]]
    if len(header) < 2 or header[0].lower() not in _NAME_COLUMNS:
        raise PRBError(f"prb validity: --scores {path} line 1: the header must start with 'model' and name at "
                       f"least one benchmark, e.g. model,personalized_rb,rewardbench2 (got {','.join(header)!r})")
    benchmarks = header[1:]
    out: list[tuple[int, str, dict]] = []
    for lineno, row in enumerate(rows[1:], start=2):
        cells = [c.strip() for c in row]
        if len(cells) != len(header):
            problems.append(f"prb validity: --scores {path} line {lineno}: {len(cells)} cells, the header has "
                            f"{len(header)}; give one score per benchmark (leave none empty)")
            continue
        out.append((lineno, cells[0], dict(zip(benchmarks, cells[1:]))))
    return benchmarks, out


def _from_json(path: Path, text: str) -> tuple[list[str], list[tuple[int, str, dict]]]:
    try:
        data = json.loads(text, object_pairs_hook=list)
    except ValueError as exc:
        raise PRBError(f"prb validity: --scores {path} is not valid JSON ({exc}); give "
                       '{"model": {"benchmark": score, ...}, ...} or a CSV file') from None
    if not isinstance(data, list) or not all(isinstance(v, list) and all(isinstance(p, tuple) for p in v)
                                              for _, v in data):
        raise PRBError(f"prb validity: --scores {path}: expected an object of model -> "
                       '{"benchmark": score, ...} (e.g. {"my-rm": {"rewardbench2": 71.2}})')
    benchmarks: list[str] = []
    out: list[tuple[int, str, dict]] = []
    for position, (name, pairs) in enumerate(data, start=1):
        for bench, _ in pairs:
            if bench not in benchmarks:
                benchmarks.append(bench)
        out.append((position, name, dict(pairs)))
    return benchmarks, out


def read_scores(path: Path) -> PublishedScores:
    """Read and check a scores file; every problem is one line of the error raised.

    Args:
        path: a ``.csv`` or ``.json`` file (other suffixes: JSON if it starts with ``{``).
    """
    text = read_text(path, "scores file")
    problems: list[str] = []
    is_json = path.suffix.lower() == ".json" or (path.suffix.lower() != ".csv" and text.lstrip().startswith("{"))
    benchmarks, rows = _from_json(path, text) if is_json else _from_csv(path, text, problems)
    where = "entry" if is_json else "line"
    scores: dict[str, dict[str, float]] = {}
    first_at: dict[str, int] = {}
    for at, name, values in rows:
        name = name.strip()
        if not name:
            problems.append(f"prb validity: --scores {path} {where} {at}: the model name is empty")
            continue
        if name in first_at:
            problems.append(f"prb validity: --scores {path} {where} {at}: model '{name}' is listed twice (first at "
                            f"{where} {first_at[name]}); keep one row per model")
            continue
        first_at[name] = at
        kept: dict[str, float] = {}
        for bench, raw in values.items():
            number = _number(raw)
            if number is None:
                problems.append(f"prb validity: --scores {path} {where} {at}: the {bench} score of '{name}' is not a "
                                f"number (got {raw!r})")
                continue
            kept[bench] = number
        scores[name] = kept
    if problems:
        raise PRBError("\n".join(problems))
    if not scores:
        raise PRBError(f"prb validity: --scores {path} names no model")
    return PublishedScores(path, tuple(benchmarks), scores)

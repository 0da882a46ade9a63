"""Benchmark scores from elsewhere (a leaderboard, a paper) for ``prb validity --scores FILE``.

A small file, model name -> score per benchmark, in one of two forms:

- CSV: a header ``model,<benchmark>,<benchmark>...`` (the first column names the model;
  ``name`` works too), one row per model;
- JSON: ``{"<model>": {"<benchmark>": score, ...}, ...}``.

Scores are numbers (percentages or fractions; correlations do not care) within
:data:`MAX_SCORE` of zero. Every problem is collected and reported as one line each
(duplicate names, a score that is not a number, a row with too few cells), the first
:data:`SHOWN_PROBLEMS` of them and then a count, so a user fixes the file in one pass.
The file is guarded as the data readers guard theirs (:func:`prb_tasks.data.rawfiles.check_file`:
a regular file, never a FIFO or ``/dev/zero``, of at most :data:`MAX_SCORES_FILE_BYTES`;
UTF-8; JSON nested too deeply is one line). Matching the names to the contestants is
:mod:`prb_tasks.report.validity_benchmarks`' job.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.common.textfiles import read_text, too_deep, unreadable_number
from prb_tasks.data.rawfiles import check_file

_NAME_COLUMNS = ("model", "name")
#: A leaderboard of every model ever published is a few MB; beyond this the file is the wrong one.
MAX_SCORES_FILE_BYTES = 64 * 1024**2
#: No benchmark scores beyond this (percentages, fractions, Elo); larger values are typos or
#: garbage, and near 1e308 they overflow every difference and axis computed from them.
MAX_SCORE = 1e12
#: Problems listed one line each before the rest are counted.
SHOWN_PROBLEMS = 20


class _Object(list):
    """A JSON object as its (key, value) pairs, told apart from a JSON array."""


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


def summarised(problems: list[str], what: str, shown: int = SHOWN_PROBLEMS) -> list[str]:
    """The first ``shown`` problem lines, then one line counting the rest.

    Args:
        problems: one line each.
        what: what the rest are, plural (``problems in the scores file``).
        shown: how many to list.
    """
    if len(problems) <= shown:
        return problems
    return [*problems[:shown], f"prb validity: ... and {len(problems) - shown:,} more {what}"]


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


def _csv_rows(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """The non-blank rows with the line each starts on; a cell past the csv module's limit
    (128 KiB: no score or name is that long) is one line."""
    reader = csv.reader(io.StringIO(text))
    rows: list[tuple[int, list[str]]] = []
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return rows
        except csv.Error as exc:
            raise PRBError(f"prb validity: --scores {path} line {start}: cannot read it as CSV ({exc}); "
                           "a cell holds a model name or a score, nothing longer") from None
        if any(c.strip() for c in row):
            rows.append((start, row))


def _from_csv(path: Path, text: str, problems: list[str]) -> tuple[list[str], list[tuple[int, str, dict]]]:
    numbered = _csv_rows(path, text)
    rows = [row for _, row in numbered]
    if not rows:
        raise PRBError(f"prb validity: --scores {path} is empty; give a header model,<benchmark>,... and one row "
                       "per model")
    header = [c.strip() for c in rows[0]]
    if len(header) < 2 or header[0].lower() not in _NAME_COLUMNS:
        raise PRBError(f"prb validity: --scores {path} line 1: the header must start with 'model' and name at "
                       f"least one benchmark, e.g. model,personalized_rb,rewardbench2 (got {','.join(header)!r})")
    benchmarks = header[1:]
    out: list[tuple[int, str, dict]] = []
    for lineno, row in numbered[1:]:
        cells = [c.strip() for c in row]
        if len(cells) != len(header):
            problems.append(f"prb validity: --scores {path} line {lineno}: {len(cells)} cells, the header has "
                            f"{len(header)}; give one score per benchmark (leave none empty)")
            continue
        out.append((lineno, cells[0], dict(zip(benchmarks, cells[1:]))))
    return benchmarks, out


def _from_json(path: Path, text: str) -> tuple[list[str], list[tuple[int, str, dict]]]:
    try:
        data = json.loads(text, object_pairs_hook=_Object)
    except json.JSONDecodeError as exc:
        raise PRBError(f"prb validity: --scores {path} is not valid JSON ({exc}); give "
                       '{"model": {"benchmark": score, ...}, ...} or a CSV file') from None
    except RecursionError:
        raise PRBError(f"prb validity: --scores {too_deep(str(path))}") from None
    except ValueError as exc:  # an integer thousands of digits long
        raise PRBError(f"prb validity: --scores {path} {unreadable_number(exc)}; fix the file") from None
    if not isinstance(data, _Object) or not all(isinstance(v, _Object) for _, v in data):
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


def _quoted(raw: object, limit: int = 40) -> str:
    """``raw`` as the message quotes it: its repr, cut to ``limit`` characters."""
    text = repr(raw)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def read_scores(path: Path) -> PublishedScores:
    """Read and check a scores file; every problem is one line of the error raised.

    Args:
        path: a ``.csv`` or ``.json`` file (other suffixes: JSON if it starts with ``{``).
    """
    check_file(path, "scores file", MAX_SCORES_FILE_BYTES)  # never a FIFO (blocks) or /dev/zero (endless)
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
                                f"number (got {_quoted(raw)})")
                continue
            if abs(number) > MAX_SCORE:
                problems.append(f"prb validity: --scores {path} {where} {at}: the {bench} score of '{name}' is "
                                f"{number:g}, beyond any benchmark's scale (at most {MAX_SCORE:g} either side of 0)")
                continue
            kept[bench] = number
        scores[name] = kept
    if problems:
        raise PRBError("\n".join(summarised(problems, "problems in the scores file")))
    if not scores:
        raise PRBError(f"prb validity: --scores {path} names no model")
    return PublishedScores(path, tuple(benchmarks), scores)

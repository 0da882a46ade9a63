"""``prb compare --label RUN=NAME`` and ``--names FILE``: the names a user gives runs for a figure.

RUN is a run's folder (or any folder above its results file), the results file itself,
or the label ``prb compare`` would show. A RUN that names no run is a mistake to
report, never a name silently dropped.
"""

from __future__ import annotations

from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.report.runs import Run


def read_names(specs: list[str], file: Path | None = None) -> list[tuple[str, str, str]]:
    """(RUN, NAME, where it was given) from ``--label`` values and a ``--names`` file.

    Args:
        specs: ``RUN=NAME`` strings.
        file: a file with one ``RUN=NAME`` per line; blank lines and ``#`` comments skipped.
    """
    given = [(spec, f"--label {spec}") for spec in specs]
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PRBError(f"prb compare: cannot read --names {file}: "
                           f"{getattr(exc, 'strerror', None) or exc}") from None
        for lineno, line in enumerate(text.splitlines(), start=1):
            line = line.split("#", 1)[0].strip()
            if line:
                given.append((line, f"--names {file} line {lineno}"))
    names = []
    for spec, where in given:
        run, sep, name = spec.rpartition("=")
        if not sep or not run.strip() or not name.strip():
            raise PRBError(f"prb compare: {where}: expected RUN=NAME (a run folder, results file or label, "
                           "then the name to show)")
        names.append((run.strip(), name.strip(), where))
    return names


def _matches(run: Run, target: str) -> bool:
    if target == run.label:
        return True
    path = Path(target).expanduser()
    if not path.exists():
        return False
    resolved, results = path.resolve(), run.path.resolve()
    return resolved == results or resolved in results.parents


def assign(runs: list[Run], names: list[tuple[str, str, str]]) -> dict[int, str]:
    """Run index -> the name the user gave it (the most specific match wins).

    Raises:
        PRBError: a RUN that matches no run.
    """
    chosen: dict[int, tuple[int, str]] = {}
    for target, name, where in names:
        hits = [i for i, run in enumerate(runs) if _matches(run, target)]
        if not hits:
            raise PRBError(f"prb compare: {where}: no run matches '{target}'; give a run folder, its results file "
                           "or the label prb compare shows")
        for i in hits:
            depth = len(Path(target).expanduser().resolve().parts) if Path(target).expanduser().exists() else 10**6
            if i not in chosen or depth >= chosen[i][0]:
                chosen[i] = (depth, name)
    return {i: name for i, (_, name) in chosen.items()}

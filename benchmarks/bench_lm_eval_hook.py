"""What prb's start-up hook for plain ``lm_eval`` costs (issue 34).

Measured in a venv where prb is installed (wheel or editable): every measurement is
taken with the hook's two files in place and with them moved aside (the venv as if prb
were not installed, as far as start-up goes), interleaved, each in a fresh process.

- ``-X importtime -c pass``: the import time the hook's module adds (its own line) and
  the sum of every module's own import time;
- wall time of ``python -c pass``;
- wall time of ``lm_eval --help`` and of ``lm_eval ls tasks`` (fewer trials: seconds each).

The hook files are put back even if a run fails or is interrupted.

    python benchmarks/bench_lm_eval_hook.py --venv /path/to/venv
    python benchmarks/bench_lm_eval_hook.py --venv V --trials 30 --lm-eval-trials 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

HOOK_FILES = ("prb_lm_eval_hook.pth", "_prb_lm_eval_hook.py")
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def _site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


@contextmanager
def _hook_removed(site: Path) -> Iterator[None]:
    """The hook's files moved aside (and its cached bytecode), restored afterwards."""
    with tempfile.TemporaryDirectory(prefix="prb-hook-aside-") as aside:
        moved = []
        for name in HOOK_FILES:
            if (site / name).exists():
                shutil.move(str(site / name), str(Path(aside) / name))
                moved.append(name)
        try:
            yield
        finally:
            for name in moved:
                shutil.move(str(Path(aside) / name), str(site / name))


def _importtime(python: Path) -> tuple[int, int]:
    """(sum of every module's own import time, the hook module's cumulative time), in µs."""
    proc = subprocess.run([str(python), "-X", "importtime", "-c", "pass"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    total, hook = 0, 0
    for line in proc.stderr.splitlines():
        match = _LINE.match(line)
        if match:
            total += int(match.group(1))
            if match.group(4) == "_prb_lm_eval_hook":
                hook = int(match.group(2))
    return total, hook


def _wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", required=True, type=Path, help="a venv with prb installed")
    parser.add_argument("--trials", type=int, default=20, help="runs of `python -c pass` each way")
    parser.add_argument("--lm-eval-trials", type=int, default=3, help="runs of each lm_eval command each way (0: skip)")
    parser.add_argument("--no-ls", action="store_true", help="skip `lm_eval ls tasks` (over a minute per run)")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    args = parser.parse_args()
    python = args.venv / "bin" / "python"
    lm_eval = args.venv / "bin" / "lm_eval"
    site = _site_packages(python)
    if not (site / HOOK_FILES[0]).exists():
        parser.error(f"{site / HOOK_FILES[0]} is missing: install prb into {args.venv} first")
    data: dict[str, dict[str, list[float]]] = {"with": {}, "without": {}}

    def add(way: str, key: str, value: float) -> None:
        data[way].setdefault(key, []).append(value)

    _importtime(python)  # a first run writes bytecode caches
    for trial in range(args.trials):
        # Alternating which way goes first cancels an order effect on a busy machine.
        for way in ("with", "without") if trial % 2 == 0 else ("without", "with"):
            with _hook_removed(site) if way == "without" else nullcontext():
                total, hook = _importtime(python)
                add(way, "importtime_sum_us", total)
                add(way, "hook_module_us", hook)
                add(way, "python_c_pass_s", _wall([str(python), "-c", "pass"]))
    for trial in range(args.lm_eval_trials):
        for way in ("with", "without") if trial % 2 == 0 else ("without", "with"):
            with _hook_removed(site) if way == "without" else nullcontext():
                add(way, "lm_eval_help_s", _wall([str(lm_eval), "--help"]))
                if not args.no_ls:
                    add(way, "lm_eval_ls_tasks_s", _wall([str(lm_eval), "ls", "tasks"]))
    print(f"{'measure':<20} {'with hook (median)':>20} {'without (median)':>18} {'paired diff (median)':>22}  runs")
    for key in data["with"]:
        with_, without = data["with"][key], data["without"][key]
        diff = statistics.median(a - b for a, b in zip(with_, without))
        print(f"{key:<20} {statistics.median(with_):>20.4g} {statistics.median(without):>18.4g} {diff:>22.4g}"
              f"  {len(with_)}")
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

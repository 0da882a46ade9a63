"""Time of one ``parse_verdict`` call on hostile completions (a judge looping on tags or spaces).

Each case is parsed in a child process (so a quadratic parser cannot stall the benchmark:
it is stopped after ``--timeout`` seconds) and the best of ``--trials`` calls is reported,
in milliseconds. ``--ref REF`` also times the parser as it is in that git revision (e.g.
``main``), side by side with the working tree's.

    python benchmarks/bench_verdict.py                 # the working tree's parser
    python benchmarks/bench_verdict.py --ref main      # before / after table
    python benchmarks/bench_verdict.py --cases issue   # only the three inputs of issue 14

The target (issue 14) is any completion of up to 1 MB in under 100 ms. Not a test: numbers
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import importlib.util
import multiprocessing as mp
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MB = 1_000_000
ROOT = Path(__file__).resolve().parent.parent


def _random_text(size: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    alphabet = "abcdefgh ABRrtu:<>/[]{}\"'*\n\t.,-=0123456789é€"
    return "".join(rng.choice(alphabet) for _ in range(size))


def _verdict_soup(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    pieces = ["Result: A", "Result: B", "[[A]]", "[[B]]", "<think>", "</think>", "{", "}", '"choice": "A"',
              "**", "Answer:", " ", "\n", "lorem ipsum", "Response B", "Final verdict", " or ", "[[", "\"", ":"]
    out: list[str] = []
    n = 0
    while n < size:
        piece = rng.choice(pieces)
        out.append(piece)
        n += len(piece)
    return "".join(out)[:size]


# name -> (group, builder). "issue": the inputs measured in issue 14; "1mb": adversarial 1 MB inputs.
CASES = {
    "<THINK> x 20,000 (unclosed)": ("issue", lambda: "<THINK>" * 20_000),
    "<think> x 2,300 (unclosed)": ("issue", lambda: "<think>" * 2_300),
    "Result: + 16,000 spaces + x": ("issue", lambda: "Result:" + " " * 16_000 + "x"),
    "<think> x 1 MB (unclosed)": ("1mb", lambda: ("<think>" * (MB // 7 + 1))[:MB]),
    "</think><think> x 1 MB": ("1mb", lambda: ("</think><think>" * (MB // 15 + 1))[:MB]),
    "Result: + 1 MB spaces + x": ("1mb", lambda: "Result:" + " " * MB + "x"),
    "Result: x 1 MB": ("1mb", lambda: ("Result:" * (MB // 7 + 1))[:MB]),
    "Final + 1 MB spaces": ("1mb", lambda: "Final" + " " * MB + "verdict"),
    "{ x 1 MB": ("1mb", lambda: "{" * MB),
    '{"choice": + 1 MB of [': ("1mb", lambda: '{"choice": ' + "[" * MB + "}"),
    "[[ + 1 MB spaces": ("1mb", lambda: "[[" + " " * MB + "A"),
    "A + 1 MB spaces + x": ("1mb", lambda: "A" + " " * MB + "x"),
    "Response + 1 MB spaces": ("1mb", lambda: "Result: Response" + " " * MB + "x"),
    "random 1 MB": ("1mb", lambda: _random_text(MB)),
    "verdict soup 1 MB": ("1mb", lambda: _verdict_soup(MB)),
    '{"choice": "A"} x 1 MB': ("1mb", lambda: ('{"choice": "A"}' * (MB // 15 + 1))[:MB]),
    "Result: A or  x 1 MB": ("1mb", lambda: ("Result: A or " * (MB // 13 + 1))[:MB]),
    "[[A]] x 1 MB": ("1mb", lambda: ("[[A]]" * (MB // 5 + 1))[:MB]),
    "1 MB prose + Result: B": ("1mb", lambda: ("The first answer is fine. " * (MB // 26))[:MB - 10] + "\nResult: B"),
}


def _load_parser(source: Path):
    spec = importlib.util.spec_from_file_location(f"verdict_{abs(hash(str(source)))}", source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.parse_verdict


def _child(source: str, name: str, trials: int, queue) -> None:
    parse = _load_parser(Path(source))
    text = CASES[name][1]()
    best = float("inf")
    verdict = None
    for _ in range(trials):
        start = time.perf_counter()
        verdict = parse(text)
        best = min(best, time.perf_counter() - start)
    queue.put((best, f"{verdict.outcome}{'/' + verdict.letter if verdict.letter else ''}"))


def _time_case(source: Path, name: str, trials: int, timeout: float) -> str:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(str(source), name, trials, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return f"> {timeout:.0f} s (stopped)"
    if queue.empty():
        return f"crashed (exit {proc.exitcode})"
    seconds, outcome = queue.get()
    return f"{seconds * 1000:,.1f} ms ({outcome})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", help="also time prb_tasks/replies/verdict.py as it is in this git revision")
    parser.add_argument("--cases", choices=["all", "issue", "1mb"], default="all")
    parser.add_argument("--trials", type=int, default=3, help="calls per case; the best is reported")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case is stopped")
    args = parser.parse_args()

    parsers = {"working tree": ROOT / "prb_tasks" / "replies" / "verdict.py"}
    tmp = tempfile.TemporaryDirectory()
    if args.ref:
        # Before issue 47 the parser lived in scoring/.
        shown = [subprocess.run(["git", "-C", str(ROOT), "show", f"{args.ref}:prb_tasks/{pkg}/verdict.py"],
                                capture_output=True, text=True) for pkg in ("replies", "scoring")]
        old = next((s.stdout for s in shown if s.returncode == 0), None)
        if old is None:
            sys.exit(f"bench_verdict: no prb_tasks/replies/verdict.py or prb_tasks/scoring/verdict.py at '{args.ref}'")
        path = Path(tmp.name) / "verdict_ref.py"
        path.write_text(old, encoding="utf-8")
        parsers = {args.ref: path, **parsers}

    names = [n for n, (group, _) in CASES.items() if args.cases in ("all", group)]
    width = max(len(n) for n in names)
    print(f"{'case':<{width}} | " + " | ".join(f"{label:>28}" for label in parsers))
    print("-" * width + "-|-" + "-|-".join("-" * 28 for _ in parsers))
    for name in names:
        cells = [_time_case(path, name, args.trials, args.timeout) for path in parsers.values()]
        print(f"{name:<{width}} | " + " | ".join(f"{c:>28}" for c in cells), flush=True)
    tmp.cleanup()
    sys.exit(0)


if __name__ == "__main__":
    main()

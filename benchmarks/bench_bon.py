"""Best-of-N on Personalized RewardBench: grader calls and wall time for 3 and for 6 contestants,
and the time of ``prb validity`` over 6 runs.

On synthetic data in the full-size shape (``fullsize_data.py``: 2,830 questions; ``--scale``
shrinks it), with N candidates per question given as the user's own JSONL, every step is a
real ``prb eval`` against the project's fake server (run in this process's threads):

1. ``personalized_rb_bon_grade``: the grader scores every candidate once (questions x N calls);
2. contestants 1-3, then 4-6: ``personalized_rb_bon_judge`` (pointwise prb-judge judges,
   each a different model name), each also running ``personalized_rb`` (its benchmark);
3. ``prb validity`` over the 6 models.

The grader's request count is read from the server after each phase: it must not grow
with the number of contestants.

    python benchmarks/bench_bon.py                 # full size: 2,830 questions x 16 (long)
    python benchmarks/bench_bon.py --scale 0.02 --n 8

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.fullsize_data import generate
from benchmarks.measure import load, machine, python, run
from prb_tasks.testing.fake_server import FakeLLMServer, Message


def answer(messages: list[Message], model: str) -> str:
    """Grader: every aspect gets the candidate's stated quality; contestants: a score from a
    hash of model and prompt (so each contestant ranks differently); pairs: a verdict."""
    prompt = messages[-1]["content"]
    quality = re.search(r"of quality (\d)", prompt)
    if model.endswith("grader"):
        aspects = len(re.findall(r"^Aspect \d+:", prompt, re.M))
        return "\n".join(f"Aspect {i}: {quality.group(1) if quality else 0}" for i in range(1, aspects + 1))
    digest = int(hashlib.sha256(f"{model}\n{prompt}".encode()).hexdigest()[:8], 16)
    if quality is None:
        return f"Result: {'AB'[digest % 2]}"
    return f"Score: {1 + digest % 10}"


def write_candidates(data: Path, out: Path, n: int) -> int:
    """The user's own candidates file: N answers per question, each stating a quality 0-2."""
    questions = 0
    with out.open("w", encoding="utf-8") as handle:
        for short, folder in (("art", "Art_and_Entertainment"), ("lifestyle", "Lifestyle_and_Personal_Development"),
                              ("society", "Society_and_Culture")):
            import pyarrow.parquet as pq

            rows = pq.read_table(data / folder / "test-00000-of-00001.parquet", columns=["id"]).num_rows
            for index in range(rows):
                texts = [f"Candidate {c} for {short}/{index} of quality {(index + c) % 3}." for c in range(n)]
                handle.write(json.dumps({"pair_key": f"{short}/{index}", "candidates": texts}) + "\n")
                questions += 1
    return questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="row-count multiplier of the full-size data")
    parser.add_argument("--n", type=int, default=16, help="candidates per question")
    parser.add_argument("--concurrency", type=int, default=32, help="the judges' num_concurrent")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="prb-bench-bon-") as tmp, \
            FakeLLMServer(answer, record_requests=False) as srv:
        root = Path(tmp)
        generate(root / "data", scale=args.scale)
        questions = write_candidates(root / "data", root / "candidates.jsonl", args.n)
        meta = {"data_dir": str(root / "data"), "k": 10, "candidates": str(root / "candidates.jsonl"),
                "grades": str(root / "out" / "grader")}
        env = {"OPENAI_API_KEY": "sk-bench", "PRB_CACHE_DIR": str(root / "cache")}

        def judge(name: str) -> list[str]:
            return ["--model", "prb-judge", "--model_args",
                    f"model=openai/{name},api_base={srv.openai_base},cache_dir={root / 'jcache'},"
                    f"num_concurrent={args.concurrency}"]

        def evaluate(name: str, tasks: str) -> float:
            done = run(python("-m", "prb_tasks", "eval", *judge(name), "--tasks", tasks, "--metadata",
                              json.dumps(meta), "--output_path", str(root / "out" / name), "--log_samples"),
                       env=env, cwd=root)
            if done.returncode != 0:
                raise SystemExit(f"prb eval {name} failed:\n{done.stderr[-3000:]}")
            return done.wall

        numbers: dict[str, object] = {"questions": questions, "n": args.n, "machine": machine()}
        numbers["grade_s"] = evaluate("grader", "personalized_rb_bon_grade")
        numbers["grader_calls_after_grading"] = Counter(srv.stats()["models"])["grader"]
        started = time.perf_counter()
        for i in range(1, 4):
            evaluate(f"contestant-{i}", "personalized_rb_bon_judge,personalized_rb")
        numbers["contestants_1_3_s"] = time.perf_counter() - started
        numbers["grader_calls_after_3"] = Counter(srv.stats()["models"])["grader"]
        started = time.perf_counter()
        for i in range(4, 7):
            evaluate(f"contestant-{i}", "personalized_rb_bon_judge,personalized_rb")
        numbers["contestants_4_6_s"] = time.perf_counter() - started
        numbers["grader_calls_after_6"] = Counter(srv.stats()["models"])["grader"]
        done = run(python("-m", "prb_tasks", "validity", str(root / "out"), "--out", str(root / "validity")),
                   env=env, cwd=root)
        if done.returncode != 0:
            raise SystemExit(f"prb validity failed:\n{done.stderr[-3000:]}")
        numbers["validity_6_runs_s"] = done.wall
        numbers["validity_peak_mb"] = done.peak_rss_mb
        numbers["load"] = load()
    print(json.dumps(numbers, indent=2))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()

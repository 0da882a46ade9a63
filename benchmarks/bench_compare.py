"""Time ``prb compare`` over six full-size runs and measure the HTML report.

Builds, once, a synthetic copy of the benchmark at full size (2,830 pairs: 767 / 989 /
1,074, profiles of ~90 KB per row as in the real data, written as parquet) and six
lm-eval output folders in the format lm-eval 0.4.13 writes with ``--log_samples``: four
``prb-judge`` runs of ``personalized_rb`` (both orders: 5,660 judgments each, with
usage files) and two ``prb-rm`` runs of ``personalized_rb_scalar``. Docs are made by the
real task loader and scored by the real ``process_results``. Then runs
``python -m prb_tasks compare RUNS --out REPORT`` in a fresh process (the time a user
waits, interpreter start included) and prints wall time and file sizes.

    python benchmarks/bench_compare.py                 # build in /tmp/prb-bench-compare, then time
    python benchmarks/bench_compare.py --repeat 3 --workdir DIR

Targets (issue 9): under 10 s, report.html under 15 MB. Not a test: timings depend on
the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

SIZES = {"Art_and_Entertainment": 767, "Lifestyle_and_Personal_Development": 989, "Society_and_Culture": 1074}
SHORT = {"Art_and_Entertainment": "art", "Lifestyle_and_Personal_Development": "lifestyle",
         "Society_and_Culture": "society"}
JUDGES = (("openai/gpt-4o-mini", 0.66, 0.55), ("anthropic/claude-haiku-4-5", 0.70, 0.50),
          ("openai/gpt-4.1", 0.74, 0.52), ("ollama_chat/qwen3:8b", 0.61, 0.64))
RMS = (("Skywork/Skywork-Reward-V2-Llama-3.2-3B", 0.72), ("bm25", 0.58))
STAMP = "2026-01-0{}T10-00-00.000000"
WORDS = ("budget camera travel light used gear practice routine simple honest reader quiet small weekend "
         "beginner local cheap durable friendly careful patient season garden recipe plan").split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def build_data(folder: Path) -> None:
    """A full-size copy in the HF layout with realistic field sizes."""
    from prb_tasks.testing.hub_layout import write_shard

    rng = random.Random(0)
    for config, size in SIZES.items():
        rows = []
        for i in range(size):
            chosen_words, rejected_words = rng.randint(60, 100), rng.randint(60, 100)
            rows.append({
                "id": f"{SHORT[config]}-{i:05d}",
                "question": _text(rng, rng.randint(20, 40)) + "?",
                "category": rng.choice(["Photography", "Music", "Film", "Cooking", "Fitness", "Careers", "Books"]),
                "profile": [{"category": "Posts", "id": f"p{i}-{j}", "text": _text(rng, 500)} for j in range(30)],
                "rubric_aspects": [{"aspect": _text(rng, 10), "evidence": _text(rng, 25), "reason": _text(rng, 25)}
                                   for _ in range(3)],
                "narrative": _text(rng, 50),
                "chosen": _text(rng, chosen_words),
                "rejected": _text(rng, rejected_words),
            })
        write_shard(folder / config, rows)


def _results(model: str, args: dict, family: str, variant: str, output_type: str, data: Path,
             per_task: dict[str, dict]) -> dict:
    subtasks = [f"{family}_{SHORT[c]}" for c in SIZES]
    return {
        "results": {**per_task},
        "group_subtasks": {family: subtasks},
        "configs": {t: {"task": t, "output_type": output_type, "metadata": {"data_dir": str(data)},
                        "dataset_kwargs": {"subset": c, "variant": variant}} for t, c in zip(subtasks, SIZES)},
        "n-samples": {t: {"original": n, "effective": n} for t, n in
                      zip(subtasks, [per_task[t]["sample_len"] for t in subtasks])},
        "config": {"model": model, "model_args": args, "limit": None},
    }


def write_run(out: Path, n: int, family: str, variant: str, output_type: str, backend: str, args: dict,
              data: Path, sample: Callable[[random.Random, int, dict], tuple[dict, int]]) -> None:
    """One lm-eval output folder: a samples file per subset and the results file.

    Args:
        sample: (rng, doc_id, doc) -> (the logged sample, its acc).
    """
    from prb_tasks.documents.personalized_rb import build_docs

    rng = random.Random(n)
    stamp = STAMP.format(n)
    out.mkdir(parents=True, exist_ok=True)
    per_task = {}
    for config in SIZES:
        task = f"{family}_{SHORT[config]}"
        made = [sample(rng, i, doc) for i, doc in enumerate(build_docs(config, variant, data_dir=str(data)))]
        (out / f"samples_{task}_{stamp}.jsonl").write_text("".join(json.dumps(m) + "\n" for m, _ in made))
        per_task[task] = {"alias": config, "sample_len": len(made), "acc,none": sum(a for _, a in made) / len(made)}
    results = _results(backend, args, family, variant, output_type, data, per_task)
    (out / f"results_{stamp}.json").write_text(json.dumps(results))


def _logged(doc_id: int, doc: dict, target: str, arguments: dict, resps: list, filtered: list,
            scored: dict) -> dict:
    return {"doc_id": doc_id, "doc": doc, "target": target, "arguments": arguments, "resps": resps,
            "filtered_resps": filtered, "filter": "none", "metrics": list(scored), "doc_hash": "x",
            "prompt_hash": "x", "target_hash": "x", **scored}


def build_judge(out: Path, n: int, model: str, skill: float, a_bias: float, data: Path) -> None:
    from prb_tasks.scoring.metrics import process_judge_both

    def sample(rng: random.Random, doc_id: int, doc: dict) -> tuple[dict, int]:
        if rng.random() < 0.01:
            text = "Both answers could work for this person; I cannot tell which one fits better."
        else:
            right = rng.random() < skill
            letter = doc["chosen_position"] if right else ("B" if doc["chosen_position"] == "A" else "A")
            if rng.random() > 0.85:
                letter = "A" if rng.random() < a_bias else "B"
            text = ("Response " + letter + " keeps to what this person said about budget and experience, "
                    "while the other ignores it.\nResult: " + letter)
        scored = process_judge_both(doc, [text])
        chat = json.dumps([{"role": "system", "content": doc["system_prompt"]},
                           {"role": "user", "content": doc["prompt"]}])
        arguments = {"gen_args_0": {"arg_0": chat, "arg_1": {"until": [], "max_gen_toks": 512}}}
        return _logged(doc_id, doc, doc["chosen_position"], arguments, [[text]], [text], scored), scored["acc"]

    write_run(out, n, "personalized_rb", "both", "generate_until", "prb-judge", {"model": model}, data, sample)
    judgments = 2 * sum(SIZES.values())
    usage = {"model": model, "judgments": judgments, "requests_ok": judgments, "cache_hits": 0,
             "tokens": {"input": 560 * judgments, "output": 40 * judgments},
             "cost": {"usd": 0.00012 * judgments * (n + 1), "unpriced_calls": 0},
             "cost_of_cache_hits_when_made": {"usd": 0.0, "unpriced_calls": 0},
             "latency_s": {"p50": 0.8, "p90": 1.9, "p99": 3.1}}
    (out / f"usage_{STAMP.format(n)}.json").write_text(json.dumps(usage))


def build_rm(out: Path, n: int, model: str, skill: float, data: Path) -> None:
    from prb_tasks.scoring.metrics import process_scalar

    def sample(rng: random.Random, doc_id: int, doc: dict) -> tuple[dict, int]:
        gap = rng.gauss(1.2 * (skill - 0.5) * 4, 2.0)
        base = rng.gauss(0, 3)
        scores = [[str(base + gap), "False"], [str(base), "False"]]
        scored = process_scalar(doc, [(float(x[0]), False) for x in scores])
        arguments = {f"gen_args_{i}": {"arg_0": doc["prompt"], "arg_1": " " + c} for i, c in enumerate(doc["choices"])}
        return _logged(doc_id, doc, "0", arguments, [[x] for x in scores], scores, scored), scored["acc"]

    args = {"pretrained": model} if "/" in model else {"scorer": model}
    write_run(out, n, "personalized_rb_scalar", "scalar", "multiple_choice", "prb-rm", args, data, sample)


def build(workdir: Path) -> Path:
    runs = workdir / "runs"
    if (workdir / "ready").is_file():
        return runs
    started = time.perf_counter()
    data = workdir / "data"
    build_data(data)
    for n, (model, skill, a_bias) in enumerate(JUDGES, start=1):
        build_judge(runs / f"judge{n}", n, model, skill, a_bias, data)
    for n, (model, skill) in enumerate(RMS, start=len(JUDGES) + 1):
        build_rm(runs / f"rm{n}", n, model, skill, data)
    (workdir / "ready").write_text("ok\n")
    print(f"built 6 runs in {time.perf_counter() - started:.0f}s under {runs}")
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/prb-bench-compare"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    runs = build(args.workdir)
    size = sum(p.stat().st_size for p in runs.rglob("*") if p.is_file())
    print(f"input: 6 runs, {size / 1e6:.0f} MB of results and sample logs")
    times, cpu = [], []
    for i in range(args.repeat):
        report = args.workdir / f"report{i}"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "prb_tasks", "compare", str(runs), "--out", str(report)],
                              capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            print(proc.stderr)
            return 1
    html = (report / "report.html").stat().st_size
    print(proc.stdout)
    print(f"prb compare wall time: median {statistics.median(times):.2f}s over {args.repeat} runs "
          f"({', '.join(f'{t:.2f}' for t in times)}); target < 10 s")
    print(f"CPU time (user + system) of prb compare: median {statistics.median(cpu):.2f}s "
          f"(what wall time approaches on an otherwise idle machine; load average now {os.getloadavg()[0]:.1f})")
    print(f"report.html: {html / 1e6:.2f} MB (target < 15 MB); report.json "
          f"{(report / 'report.json').stat().st_size / 1e3:.0f} kB; {len(list(report.glob('*.png')))} charts")
    return 0


if __name__ == "__main__":
    sys.exit(main())

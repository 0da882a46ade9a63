"""Constructed lm-eval output folders for ``prb compare`` tests: any task, any model, any outcome.

Each run is what lm-eval writes with ``--log_samples`` (a results file and one samples
file per leaf task, and for judges a usage file with a cost), built from a rule that
says per pair whether the model got it right, so tests know every number in advance.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prb_tasks.report.settings import declared

STAMP = "2026-01-02T03-04-05.000001"


def _leaves(name: str) -> list[str]:
    from prb_tasks.common.taskindex import groups

    group = next((g for g in groups() if g.name == name and len(g.subtasks) > 1), None)
    return list(group.subtasks) if group is not None else [name]


def _judge_samples(task: str, keys: list[str], right: Callable[[str], bool], both: bool,
                   variant: str = "both") -> list[dict[str, Any]]:
    samples = []
    for n, key in enumerate(keys):
        for order, position in enumerate(("A", "B") if both else ("A",)):
            ok = right(key)
            letter = position if ok else ("B" if position == "A" else "A")
            subset = "custom" if task.startswith("personalized_custom") else task.rsplit("_", 1)[-1]
            doc = {"pair_key": key, "id": key, "subset": subset, "chosen_position": position,
                   "question": f"question {key}?", "chosen": f"chosen answer of {key} " * 3,
                   "rejected": f"rejected answer of {key}", "words_chosen": 15, "words_rejected": 4,
                   "user_id": f"u{n % 3}", "variant": variant,
                   "prompt": f"What you know about this user: EARLIER CHOICES OF {key}\nQuestion: question {key}?"}
            samples.append({"doc_id": 2 * n + order, "doc": doc, "target": position, "acc": float(ok),
                            "resps": [[f"Reasoning.\nResult: {letter}"]],
                            "filtered_resps": [f"Reasoning.\nResult: {letter}"],
                            "pos_a_rate": letter, "parse_fail": 0.0, "error_rate": 0.0, "skip_rate": 0.0})
    return samples


def _scalar_samples(task: str, keys: list[str], right: Callable[[str], bool]) -> list[dict[str, Any]]:
    samples = []
    for n, key in enumerate(keys):
        ok = right(key)
        chosen, rejected = (1.0, 0.0) if ok else (0.0, 1.0)
        doc = {"pair_key": key, "subset": task.rsplit("_", 1)[-1], "user_id": f"u{n % 3}",
               "choices": [f"chosen answer of {key} " * 3, f"rejected answer of {key}"], "variant": "scalar"}
        samples.append({"doc_id": n, "doc": doc, "target": 0, "acc": float(ok),
                        "resps": [[[chosen, False]], [[rejected, False]]],
                        "filtered_resps": [[chosen, False], [rejected, False]]})
    return samples


def write_run(folder: Path, task: str, model: str, model_args: dict[str, Any], right: Callable[[str], bool],
              pairs: int = 12, usd: float | None = None, source: dict[str, Any] | None = None,
              keys: list[str] | None = None, variant: str = "both") -> Path:
    """One finished run of ``task`` (a group or a task) in ``folder``; returns its results file.

    Args:
        folder: the output folder (created).
        task: a prb task or group name; its leaves and their settings come from the installed YAMLs.
        model: the ``--model`` name.
        model_args: the ``--model_args``.
        right: pair key -> whether the model got that pair right (in every order).
        pairs: pairs per leaf task.
        usd: for a judge, what the whole run cost (0.0 for a free local model); None: no usage file.
        source: the ``prb.data_sources`` entry of every leaf (default: the bundled sample).
        keys: the pair keys (default ``<subset>/<n>``; your own data uses ``<user>/<n>``).
        variant: a judge's docs' ``variant`` (``both``, ``profile``, ``planned``, ``oracle``...), which ladders read.
    """
    folder.mkdir(parents=True, exist_ok=True)
    leaves = _leaves(task)
    judge = model == "prb-judge" or "scalar" not in task
    results: dict[str, Any] = {}
    configs: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    total = 0
    for leaf in leaves:
        leaf_keys = keys or [f"{leaf.rsplit('_', 1)[-1]}/{i}" for i in range(pairs)]
        both = judge and "official" not in leaf
        samples = (_judge_samples(leaf, leaf_keys, right, both, variant) if judge
                   else _scalar_samples(leaf, leaf_keys, right))
        (folder / f"samples_{leaf}_{STAMP}.jsonl").write_text(
            "".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
        acc = sum(s["acc"] for s in samples) / len(samples)
        results[leaf] = {"alias": leaf, "acc,none": acc, "acc_stderr,none": 0.1}
        configs[leaf] = {"task": leaf, "output_type": "generate_until" if judge else "multiple_choice",
                         "metadata": {"version": 1.0, "setting": declared()[leaf]}}
        counts[leaf] = {"original": len(samples), "effective": len(samples)}
        total += len(samples)
    if len(leaves) > 1:
        results[task] = {"alias": task, "acc,none": sum(r["acc,none"] for r in results.values()) / len(leaves)}
    data = {
        "results": results, "configs": configs, "n-samples": counts,
        "group_subtasks": {task: leaves} if len(leaves) > 1 else {task: []},
        "config": {"model": model, "model_args": model_args, "limit": None},
        "prb": {"version": "test", "data_sources": {
            leaf: source or {"kind": "sample", "location": "sample", "subset": leaf, "rows": pairs}
            for leaf in leaves}},
    }
    path = folder / f"results_{STAMP}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    if judge and usd is not None:
        usage = {"judgments": total, "requests_ok": total, "cost": {"usd": usd, "unpriced_calls": 0},
                 "cost_of_cache_hits_when_made": {"usd": 0.0, "unpriced_calls": 0},
                 "tokens": {"input": 300 * total, "output": 20 * total}, "latency_s": {"p50": 0.4, "p90": 0.9}}
        (folder / f"usage_{STAMP}.json").write_text(json.dumps(usage), encoding="utf-8")
    return path

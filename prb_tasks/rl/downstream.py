"""Write each reward model's RL outcome as a downstream run that ``prb validity`` reads like Best-of-N.

One lm-eval-style output folder per reward model: ``results_<stamp>.json`` (``config``: model
``prb-rm`` and the RM's ``--model_args``, so the run is matched to that RM's benchmark run by
its label) and ``samples_personalized_rb_rl_<stamp>.jsonl``, one sample per held-out question
whose document is a Best-of-N contestant's (``variant: bon``, ``gold``: the grades of the
starting policy's answer and the trained policy's answer). ``bon_gain`` is the trained answer's
grade minus the starting policy's: what training against this RM added, as best-of-N's gain
is what picking added. A question with an unreadable grade has a NaN gain and is left out.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

from prb_tasks.rl.presets import RLPreset

TASK = "personalized_rb_rl"


def _mean(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def write_run(folder: Path, rm_args: str, policy: str, base: dict[str, str], trained: dict[str, str],
              grade: Any, preset: RLPreset, seed: int, engine: Optional[dict[str, str]] = None) -> Path:
    """Write one reward model's downstream run; the results file.

    Args:
        folder: the run's folder (created).
        rm_args: the RM's prb-rm ``--model_args`` (its identity in ``prb validity``).
        policy: the starting policy.
        base, trained: pair_key -> answer of the starting and of the trained policy.
        grade: ``(pair_key, answer) -> grade or None``.
        preset: the settings used (recorded).
        seed: the seed used (recorded).
        engine: what trained the policy (recorded): ``{"name": "trl" | "verl", "<package>_version": ...}``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S") + f".{time.time_ns() % 1_000_000:06d}"
    samples: list[dict[str, Any]] = []
    for doc_id, key in enumerate(sorted(set(base) & set(trained))):
        gold: list[Optional[float]] = [grade(key, base[key]), grade(key, trained[key])]
        values = [math.nan if g is None else float(g) for g in gold]
        gain = values[1] - values[0]
        doc = {"pair_key": key, "variant": "bon", "downstream": "rl", "gold": gold,
               "choices": [base[key], trained[key]]}
        samples.append({"doc_id": doc_id, "doc": doc, "target": "", "arguments": [],
                        "resps": [[trained[key]]], "filtered_resps": [trained[key]],
                        "bon_gold": values[1], "bon_gain": gain, "bon_gold_k1": values[0]})
    gains = [s["bon_gain"] for s in samples]
    ungraded = sum(math.isnan(g) for g in gains) / len(gains) if gains else math.nan
    results = {TASK: {"alias": TASK, "bon_gold,none": _mean([s["bon_gold"] for s in samples]),
                      "bon_gold_k1,none": _mean([s["bon_gold_k1"] for s in samples]),
                      "bon_gain,none": _mean(gains), "ungraded,none": ungraded}}
    data = {
        "results": results,
        "configs": {TASK: {"task": TASK, "output_type": "generate_until",
                           "dataset_kwargs": {"variant": "bon"},
                           "description": "RL downstream: a policy trained against this reward model (prb rl)"}},
        "n-samples": {TASK: {"original": len(samples), "effective": len(samples)}},
        "config": {"model": "prb-rm", "model_args": rm_args},
        "prb": {"rl": {"policy": policy, "seed": seed, "preset": asdict(preset), "engine": engine or {}}},
    }
    # Undefined values stay NaN, as lm-eval writes them (Python's json reads them back).
    text = json.dumps(data, indent=2, default=str)
    (folder / f"samples_{TASK}_{stamp}.jsonl").write_text(
        "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
    path = folder / f"results_{stamp}.json"
    path.write_text(text, encoding="utf-8")
    return path

"""What ``prb rl --engine verl --preset paper`` does differently from the authors' ``PPO/`` run.

The engine runs their trainer with their overrides, so the list is short; each entry is
(setting, the paper, ``--engine verl``). docs/rl-downstream.md's table shows it next to
``--engine trl`` (:data:`prb_tasks.rl.presets.DIFFERENCES`).
"""

from __future__ import annotations

VERL_DIFFERENCES: tuple[tuple[str, str, str], ...] = (
    ("training data", "LaMP-QA's train split, one policy per subset (verl.sh <DATASET>)",
     "LaMP-QA's train split with --lamp-qa (else Personalized RewardBench rows not held out), one policy over "
     "the three subsets"),
    ("test data", "LaMP-QA's test split, answered with vLLM (PPO/infer.py)",
     "every Personalized RewardBench row with --lamp-qa (else the rows held out), answered with transformers' "
     "generate, same sampling"),
    ("reward", "an HTTP reward server on its own GPU, score / 10, 0.5 on error",
     "prb-rm in verl's reward workers (one worker when it loads a model; on the worker's CPU), score / 10, "
     "0.5 on failure; or their server shape with --reward-url"),
    ("logging", "wandb and the console", "the console (trainer.logger=['console']); one terminal line per step"),
    ("machines", "4 GPUs on one machine", "this machine's GPUs, or a Ray cluster (--ray-address, --nodes)"),
)

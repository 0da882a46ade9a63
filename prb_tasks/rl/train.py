"""Train one policy against one reward model with TRL's GRPOTrainer; resume from the last checkpoint.

prb writes no training loop: TRL samples the rollouts, calls the reward function
(:class:`prb_tasks.rl.reward.RMReward`), computes advantages and updates the policy;
transformers' Trainer saves checkpoints every ``save_steps`` optimizer steps, and a run
started again on the same folder resumes from the newest whole one (:mod:`prb_tasks.rl.checkpoints`).
The trained policy is saved to ``<folder>/final``, which appears only when whole; a folder
that already has one is not trained again.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prb_tasks.common.atomic import fresh_staging, publish, recover
from prb_tasks.rl.presets import RLPreset
from prb_tasks.rl.prompts import RLPrompt

FINAL = "final"


def grpo_config(preset: RLPreset, folder: Path, seed: int) -> Any:
    """TRL's GRPOConfig for ``preset`` (see :data:`prb_tasks.rl.presets.DIFFERENCES`)."""
    import dataclasses

    from trl import GRPOConfig

    # transformers 5.2x renamed gradient_checkpointing to activation_checkpointing (the old
    # name warns); older releases know only the old one.
    names = {f.name for f in dataclasses.fields(GRPOConfig)}
    checkpointing = "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"
    return GRPOConfig(
        output_dir=str(folder), seed=seed, learning_rate=preset.learning_rate,
        num_train_epochs=preset.epochs, max_steps=preset.max_steps if preset.max_steps is not None else -1,
        per_device_train_batch_size=preset.micro_batch, gradient_accumulation_steps=preset.accumulation,
        steps_per_generation=preset.steps_per_generation, num_generations=preset.num_generations,
        num_iterations=1, beta=preset.beta, temperature=preset.temperature, top_p=preset.top_p,
        max_completion_length=preset.max_new_tokens, scale_rewards=preset.scale_rewards,
        loss_type=preset.loss_type, **{checkpointing: preset.gradient_checkpointing},
        save_strategy="steps", save_steps=preset.save_steps, logging_steps=1, report_to=[],
        use_cpu=not _cuda(), bf16=_cuda(), disable_tqdm=True, dataloader_num_workers=0,
    )


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def train_policy(policy: str, prompts: list[RLPrompt], reward: Any, preset: RLPreset, folder: Path,
                 seed: int, label: str = "policy") -> Path:
    """Train ``policy`` on ``prompts`` against ``reward``; the folder of the trained policy.

    Args:
        policy: hub name or folder of the starting policy.
        prompts: the training prompts.
        reward: a TRL reward function (:class:`~prb_tasks.rl.reward.RMReward`).
        preset: the settings.
        folder: the run's folder (checkpoints, then ``final``).
        seed: seed of sampling and shuffling.
        label: what the progress lines name (the reward model).

    The Trainer's per-step log dicts go to ``<folder>/train_log.jsonl``, not the terminal
    (:mod:`prb_tasks.train.steplog`).
    """
    from prb_tasks.rl.checkpoints import SealCheckpoints, problem, resume_point, set_aside

    final = folder / FINAL
    recover(final)
    if final.exists():
        why = problem(final)
        if why is None:
            print(f"prb rl: {final} exists; not training again (delete it to retrain)", file=sys.stderr)
            return final
        set_aside(final, why, "training it again")
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOTrainer

    from prb_tasks.rl.policy import load_policy
    from prb_tasks.train.steplog import LOG_FILE, StepLog

    last = resume_point(folder)
    if last is not None and preset.max_steps is not None and _steps_of(last) >= preset.max_steps > 0:
        # A kill during the final save (or final/ removed) leaves the last checkpoint at max_steps:
        # the Trainer given it trains one step more (step 7/6); the checkpoint is the policy.
        print(f"prb rl: {last} is at step {_steps_of(last)} of {preset.max_steps}: it is the trained policy "
              "(not training again)", file=sys.stderr)
        trained, tokenizer = load_policy(str(last))
        return _publish_policy(trained.save_pretrained, tokenizer, final)
    model, tokenizer = load_policy(policy)
    data = Dataset.from_list([{"prompt": p.chat(), "rm_prompt": p.rm_prompt, "profile_key": p.profile_key,
                               "pair_key": p.pair_key, "question": p.question} for p in prompts])
    folder.mkdir(parents=True, exist_ok=True)
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=grpo_config(preset, folder, seed),
                          train_dataset=data, processing_class=tokenizer)
    for printer in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(printer)
    trainer.add_callback(StepLog(folder / LOG_FILE, label))
    trainer.add_callback(SealCheckpoints())
    # TRL asks the model for a property that transformers 5 renamed; the warning, printed at
    # every step, is about TRL's code and nothing a user of prb rl can change.
    warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)
    if last is not None:
        print(f"prb rl: resuming from {last}", file=sys.stderr)
    trainer.train(resume_from_checkpoint=None if last is None else str(last))
    return _publish_policy(trainer.save_model, tokenizer, final)


def _publish_policy(save: Callable[[str], Any], tokenizer: Any, final: Path) -> Path:
    """Write the policy (``save`` into a folder) and its tokenizer as ``final``.

    final/ appears only when whole: written under a temporary name, sealed, renamed.

    Args:
        save: writes the model's weights and config into the folder it is given.
        tokenizer: the policy's tokenizer.
        final: the folder the policy is published as.
    """
    from prb_tasks.rl.checkpoints import seal

    staged = fresh_staging(final)
    save(str(staged))
    tokenizer.save_pretrained(str(staged))
    seal(staged)
    publish(staged, final, crash="rl-final")
    return final


def _steps_of(checkpoint: Path) -> int:
    """The optimizer steps a Trainer checkpoint holds (its ``trainer_state.json``; 0 when unreadable)."""
    import json

    try:
        state = json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
        return int(state.get("global_step", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0

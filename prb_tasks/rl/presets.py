"""Settings of ``prb rl``: the authors' PPO run as TRL's GRPO expresses it (``paper``), and a tiny one (``smoke``).

The authors' ``PPO/verl.sh`` (verl ``main_ppo``, commit a5c6814) trains with: actor lr 5e-7,
critic lr 5e-6, rollouts n = 1 at temperature 1.0 (top_p 1.0, top_k off), train batch 128
prompts, PPO mini-batch 16 (micro-batch 4 per GPU), one PPO epoch, KL in the reward off,
one epoch over the data, 512 new tokens, prompts up to 8,192 tokens, gradient checkpointing;
their reward function divides the served RM's score by 10 and uses 0.5 when a request fails;
training prompts show the top-10 posts, test prompts (``infer.py``) the top-5, sampled at
temperature 1.0, top_p 0.9, 512 tokens. :data:`DIFFERENCES` lists what TRL changes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal, Optional

from prb_tasks.common.errors import PRBError
from prb_tasks.common.suggest import did_you_mean


@dataclass(frozen=True)
class RLPreset:
    """Everything ``prb rl`` trains and samples with.

    Attributes:
        name: the preset's name.
        bon_preset: the Best-of-N protocol of the prompts and the grader (``official``: the
            authors' prompts from ``prb templates official``; ``prb``: prb's own).
        train_k, test_k: profile posts shown in training and in the held-out answers.
        test_fraction: share of the questions held out for grading (by a hash of ``pair_key``).
        learning_rate: the actor's learning rate.
        num_generations: completions per prompt (GRPO's group; at least 2).
        prompts_per_rollout: prompts sampled per rollout batch (verl's train batch).
        prompts_per_update: prompts per optimizer step (verl's PPO mini-batch).
        micro_batch: completions per forward/backward pass.
        epochs: passes over the training prompts (ignored when ``max_steps`` is set).
        max_steps: optimizer steps (None: the epochs decide).
        beta: KL coefficient against the reference policy (0: off, as verl's run).
        temperature, top_p: rollout sampling.
        max_new_tokens: longest completion in training.
        test_temperature, test_top_p, test_max_new_tokens: sampling of the held-out answers.
        reward_scale: the RM's score is multiplied by this (the authors divide by 10).
        reward_on_error: reward of a response the RM could not score.
        scale_rewards: TRL's advantage normalisation (``batch``: whiten over the batch, as
            verl whitens GAE advantages).
        loss_type: TRL's loss aggregation (``dapo``: token mean over the batch, verl's default).
        gradient_checkpointing: trade compute for memory.
        save_steps: checkpoint every this many optimizer steps (resume point).
        max_post_chars: longest post shown (None: the Best-of-N protocol's own choice).
    """

    name: str
    bon_preset: Literal["prb", "official"]
    train_k: int
    test_k: int
    test_fraction: float
    learning_rate: float
    num_generations: int
    prompts_per_rollout: int
    prompts_per_update: int
    micro_batch: int
    epochs: float
    max_steps: Optional[int]
    beta: float
    temperature: float
    top_p: float
    max_new_tokens: int
    test_temperature: float
    test_top_p: float
    test_max_new_tokens: int
    reward_scale: float
    reward_on_error: float
    scale_rewards: str
    loss_type: str
    gradient_checkpointing: bool
    save_steps: int
    max_post_chars: Optional[int] = None

    @property
    def completions_per_update(self) -> int:
        return self.prompts_per_update * self.num_generations

    @property
    def accumulation(self) -> int:
        """Gradient accumulation steps so one optimizer step sees ``prompts_per_update`` prompts."""
        return max(1, self.completions_per_update // self.micro_batch)

    @property
    def steps_per_generation(self) -> int:
        """TRL counts a rollout batch in micro-batches: completions per rollout / micro-batch."""
        return max(1, self.prompts_per_rollout * self.num_generations // self.micro_batch)


PRESETS: dict[str, RLPreset] = {
    "paper": RLPreset(
        name="paper", bon_preset="official", train_k=10, test_k=5, test_fraction=0.2, learning_rate=5e-7,
        num_generations=2, prompts_per_rollout=128, prompts_per_update=16, micro_batch=4, epochs=1.0,
        max_steps=None, beta=0.0, temperature=1.0, top_p=1.0, max_new_tokens=512, test_temperature=1.0,
        test_top_p=0.9, test_max_new_tokens=512, reward_scale=0.1, reward_on_error=0.5, scale_rewards="batch",
        loss_type="dapo", gradient_checkpointing=True, save_steps=8),
    "smoke": RLPreset(
        name="smoke", bon_preset="prb", train_k=1, test_k=1, test_fraction=0.3, learning_rate=2e-2,
        num_generations=4, prompts_per_rollout=2, prompts_per_update=2, micro_batch=8, epochs=1.0,
        max_steps=6, beta=0.0, temperature=1.0, top_p=1.0, max_new_tokens=10, test_temperature=1.0,
        test_top_p=1.0, test_max_new_tokens=10, reward_scale=1.0, reward_on_error=0.0, scale_rewards="batch",
        loss_type="dapo", gradient_checkpointing=False, save_steps=2, max_post_chars=200),
}

#: What TRL's GRPOTrainer cannot do as verl's PPO run did, and what ``paper`` does instead.
DIFFERENCES: tuple[tuple[str, str, str], ...] = (
    ("algorithm", "PPO with a critic (GAE)", "GRPO: no critic; the baseline is the mean reward of the prompt's "
     "group of completions"),
    ("rollouts per prompt", "n = 1", "n = 2 (GRPO needs a group of at least 2; 128 prompts give 256 completions "
     "per rollout)"),
    ("critic lr 5e-6", "the critic's optimizer", "nothing: there is no critic to train"),
    ("advantage", "GAE, whitened over the batch", "reward minus the group mean, divided by the batch's std "
     "(scale_rewards=batch)"),
    ("mini-batch 16, micro-batch 4", "16 prompts per update, 4 sequences per pass", "16 prompts x 2 = 32 "
     "completions per optimizer step: micro-batch 4, gradient accumulation 8; 8 updates per rollout batch"),
    ("reward function", "HTTP call to a reward server, score / 10, 0.5 on error", "prb-rm's scorer in-process "
     "(or served with --reward-url), score x 0.1, 0.5 when scoring fails; scores cached"),
    ("rollout engine", "vLLM", "transformers' generate (TRL's use_vllm is not enabled by prb rl)"),
    ("training data", "LaMP-QA's train split", "Personalized RewardBench rows not held out (a hash of pair_key "
     "holds out test_fraction of them)"),
    ("test data", "LaMP-QA's test split, top-5 posts", "the held-out rows, top-5 posts"),
    ("checkpoints", "verl FSDP checkpoints, converted to HF afterwards", "HF checkpoints from transformers' "
     "Trainer (resumable)"),
    ("policies", "one policy per subset (verl.sh <DATASET>)", "one policy per reward model, trained on the three "
     "subsets' rows pooled"),
    ("prompt length", "prompts over 8,192 tokens dropped", "no prompt dropped: no length limit"),
)


def get_preset(name: str, **overrides: Any) -> RLPreset:
    """The named preset, with ``overrides`` (None values ignored) applied.

    Args:
        name: ``paper`` or ``smoke``.
        **overrides: fields of :class:`RLPreset` to replace (e.g. ``max_steps``).
    """
    if name not in PRESETS:
        raise PRBError(f"prb rl: unknown preset '{name}'{did_you_mean(name, PRESETS)}; choose one of "
                       f"{', '.join(PRESETS)}")
    known = {f.name for f in fields(RLPreset)}
    given = {k: v for k, v in overrides.items() if v is not None}
    unknown = sorted(set(given) - known)
    if unknown:
        raise PRBError(f"prb rl: unknown setting '{unknown[0]}'{did_you_mean(unknown[0], known)}")
    preset = replace(PRESETS[name], **given)
    if preset.num_generations < 2:
        raise PRBError("prb rl: num_generations must be at least 2 (GRPO compares completions of one prompt)")
    if not 0 < preset.test_fraction < 1:
        raise PRBError(f"prb rl: test fraction {preset.test_fraction} must lie strictly between 0 and 1")
    return preset

"""The Hydra overrides prb passes to ``verl.trainer.main_ppo``: the authors' ``PPO/verl.sh`` (commit a5c6814).

Every override of their script is kept, in their order, with the values the preset gives
(``paper``: theirs). Five things differ, each for a reason (``docs/rl-downstream.md``):
the reward function is set at the key the pinned verl reads (:mod:`.pin`: ``reward.custom_reward_function.*``
from verl 0.7.1 on; their top-level ``custom_reward_function.*`` is ignored by verl 0.9), its path is
prb's reward module (prb-rm, or their served-RM shape),
``trainer.logger`` is ``['console']`` (their ``wandb`` needs an account and a login, and prb
keeps its own per-step log), and prb adds ``trainer.nnodes`` (one machine or a Ray cluster)
and, only when ``--max-steps`` is given, ``trainer.total_training_steps``; when prb-rm loads a model in
verl's reward workers, ``reward.num_workers=1`` (verl starts 8 by default, and each would load its own
copy of the reward model; their served reward needs no copy). The micro-batch per GPU is the preset's
(theirs 4) unless a GPU's share of the PPO mini-batch is smaller or not a multiple of it (16 prompts over
8 GPUs: 2 each); then it is the largest that divides the share (:func:`.batches.micro_batch`). Their
log-prob micro-batch (``log_prob_micro_batch_size=8``, over all GPUs) is written per GPU
(``log_prob_micro_batch_size_per_gpu``: 8 // GPUs, at least 1), as their verl divided it: verl 0.9's
workers read only the per-GPU key and refuse to start without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from prb_tasks.rl.presets import RLPreset
from prb_tasks.rl.verl_engine.batches import micro_batch
from prb_tasks.rl.verl_engine.pin import REWARD_FUNCTION, REWARD_WORKERS

#: Their logger (``['wandb','console']``) and prb's.
LOGGER = "trainer.logger=['console']"


@dataclass(frozen=True)
class VerlSettings:
    """What ``verl.sh`` sets that :class:`~prb_tasks.rl.presets.RLPreset` has no field for.

    Attributes:
        critic_lr: the critic's learning rate (theirs 5e-6; GRPO has no critic, so only verl uses it).
        max_prompt_length: longest prompt in tokens; longer ones are dropped (``filter_overlong_prompts``).
        rollout_n: completions per prompt (PPO: 1).
        gpu_memory_utilization: vLLM's share of each GPU for rollouts.
        max_num_seqs: vLLM's concurrent sequences.
        log_prob_micro_batch: micro-batch of the rollout's and the reference's log-prob passes, over all
            GPUs (theirs 8; each GPU gets 8 // GPUs, at least 1).
        save_freq: checkpoint every this many steps (theirs 10000: in effect, once at the end).
        project: the trainer's project name.
    """

    critic_lr: float = 5e-6
    max_prompt_length: int = 8192
    rollout_n: int = 1
    gpu_memory_utilization: float = 0.4
    max_num_seqs: int = 4
    log_prob_micro_batch: int = 8
    save_freq: int = 10000
    project: str = "RewardBench"


def number(value: float) -> str:
    """A float as a shell script writes it: ``5e-7``, ``1.0`` (Python writes ``5e-07``)."""
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", repr(float(value)))


def build_overrides(*, parquet: Path, policy: str, reward_module: Path, checkpoints: Path, experiment: str,
                    preset: RLPreset, gpus_per_node: int, nodes: int = 1, max_steps: Optional[int] = None,
                    reward_workers: Optional[int] = None, settings: VerlSettings = VerlSettings()) -> list[str]:
    """``main_ppo``'s command-line overrides, in ``verl.sh``'s order.

    Args:
        parquet: the training data (their script passes it as train and validation files).
        policy: hub name or folder of the starting policy (actor and critic start from it).
        reward_module: the reward function file verl imports (``compute_score`` in it).
        checkpoints: ``trainer.default_local_dir``: where verl writes ``global_step_N/actor``.
        experiment: the trainer's experiment name.
        preset: learning rate, batch sizes, sampling, response length and epochs.
        gpus_per_node: GPUs verl uses on each machine.
        nodes: machines in the Ray cluster.
        max_steps: stop after this many PPO steps (None: the epochs decide).
        reward_workers: verl's reward workers (None: verl's default).
        settings: the values ``verl.sh`` sets that the preset does not hold.
    """
    s = settings
    micro = micro_batch(preset, gpus_per_node * nodes, s.rollout_n)
    log_prob_micro = max(1, s.log_prob_micro_batch // (gpus_per_node * nodes))
    out = [
        f"data.train_files={parquet}",
        f"data.val_files={parquet}",
        f"data.train_batch_size={preset.prompts_per_rollout}",
        f"data.val_batch_size={preset.prompts_per_rollout}",
        f"data.max_prompt_length={s.max_prompt_length}",
        "data.filter_overlong_prompts=True",
        f"data.max_response_length={preset.max_new_tokens}",
        "trainer.val_before_train=False",
        f"trainer.n_gpus_per_node={gpus_per_node}",
        f"actor_rollout_ref.model.path={policy}",
        f"actor_rollout_ref.model.enable_gradient_checkpointing={preset.gradient_checkpointing}",
        f"actor_rollout_ref.actor.optim.lr={number(preset.learning_rate)}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={preset.prompts_per_update}",
        f"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu={micro}",
        f"actor_rollout_ref.rollout.n={s.rollout_n}",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.load_format=safetensors",
        "actor_rollout_ref.rollout.layered_summon=False",
        f"actor_rollout_ref.rollout.gpu_memory_utilization={s.gpu_memory_utilization}",
        f"actor_rollout_ref.rollout.max_num_seqs={s.max_num_seqs}",
        "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
        "actor_rollout_ref.rollout.pipeline_model_parallel_size=1",
        f"actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu={log_prob_micro}",
        f"actor_rollout_ref.rollout.temperature={number(preset.temperature)}",
        "actor_rollout_ref.rollout.top_k=0",
        f"actor_rollout_ref.rollout.top_p={number(preset.top_p)}",
        "actor_rollout_ref.rollout.enable_chunked_prefill=False",
        f"actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu={log_prob_micro}",
        f"{REWARD_FUNCTION}.path={reward_module}",
        f"{REWARD_FUNCTION}.name=compute_score",
        f"critic.model.path={policy}",
        f"critic.optim.lr={number(s.critic_lr)}",
        f"critic.ppo_micro_batch_size_per_gpu={micro}",
        f"algorithm.use_kl_in_reward={preset.beta != 0}",
        f"trainer.project_name={s.project}",
        f"trainer.experiment_name={experiment}",
        f"trainer.total_epochs={int(preset.epochs)}",
        LOGGER,
        f"trainer.default_local_dir={checkpoints}",
        f"trainer.save_freq={s.save_freq}",
        f"trainer.nnodes={nodes}",
    ]
    if max_steps is not None:
        out.append(f"trainer.total_training_steps={max_steps}")
    if reward_workers is not None:
        out.append(f"{REWARD_WORKERS}={reward_workers}")
    return out

"""Whether a preset's batches split over the GPUs verl trains on; refused in one line before anything is written.

verl divides each rollout batch (``data.train_batch_size`` x ``rollout.n`` sequences) evenly over
all GPUs (``validate_config``), and each PPO mini-batch (``ppo_mini_batch_size`` x ``rollout.n``)
again at the first update (its engine workers assert the mini-batch is a multiple of the
data-parallel size, and every GPU's share of the rollout batch a multiple of its share of the
mini-batch); each GPU's share of a mini-batch is then cut into micro-batches of
``ppo_micro_batch_size_per_gpu``, which must divide it. A count that breaks a rule fails minutes
into a run, after Ray and vLLM started; prb checks it first, and gives verl the preset's
micro-batch, or when a GPU's share is smaller or not a multiple of it, the largest micro-batch
that divides the share (:func:`micro_batch`: the same update, in smaller passes).
tests/rl/test_verl_real.py runs verl's own ``validate_config`` and batch split on the counts this accepts.
"""

from __future__ import annotations

from math import gcd

from prb_tasks.common.errors import PRBError
from prb_tasks.rl.presets import RLPreset


def gpu_counts(preset: RLPreset, rollout_n: int, most: int = 64) -> list[int]:
    """The total GPU counts up to ``most`` that split ``preset``'s batches evenly.

    Args:
        preset: the batch sizes (``prompts_per_rollout``, ``prompts_per_update``).
        rollout_n: completions per prompt (verl's ``rollout.n``).
        most: the largest count listed.
    """
    rollout, update = preset.prompts_per_rollout * rollout_n, preset.prompts_per_update * rollout_n
    if rollout % update:
        return []
    return [n for n in range(1, most + 1) if gcd(rollout, update) % n == 0]


def micro_batch(preset: RLPreset, gpus: int, rollout_n: int) -> int:
    """The micro-batch per GPU verl gets: the preset's, or the largest that divides one GPU's share of a mini-batch.

    Args:
        preset: the batch sizes (``micro_batch``: the largest wanted).
        gpus: all GPUs (nodes x GPUs per node).
        rollout_n: completions per prompt (verl's ``rollout.n``).
    """
    share = max(1, preset.prompts_per_update * rollout_n // gpus)
    return max(n for n in range(1, min(share, preset.micro_batch) + 1) if share % n == 0)


def check_batches(preset: RLPreset, gpus_per_node: int, nodes: int, rollout_n: int) -> None:
    """Refuse, in one line, a preset whose batches verl cannot split over ``gpus_per_node`` x ``nodes`` GPUs.

    Args:
        preset: the batch sizes.
        gpus_per_node: GPUs verl uses on each machine.
        nodes: machines.
        rollout_n: completions per prompt (verl's ``rollout.n``).
    """
    gpus = gpus_per_node * nodes
    rollout, update = preset.prompts_per_rollout, preset.prompts_per_update
    if update > rollout or rollout % update:
        raise PRBError(f"prb rl --engine verl: preset {preset.name}'s rollout batch of {rollout} prompts is not a "
                       f"multiple of its PPO mini-batch of {update}; verl needs it to be")
    if gpus in gpu_counts(preset, rollout_n, gpus):
        return
    fits = ", ".join(str(n) for n in gpu_counts(preset, rollout_n))
    raise PRBError(f"prb rl --engine verl: preset {preset.name}'s PPO mini-batch of {update} prompts (rollout "
                   f"batch {rollout}) does not split evenly over {gpus} GPUs ({nodes} node(s) x {gpus_per_node}); "
                   f"verl splits both over every GPU: use a total of {fits} GPUs (--gpus-per-node, --nodes) or "
                   "another preset")

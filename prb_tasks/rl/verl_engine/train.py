"""Train one policy against one reward model with verl's PPO (``main_ppo``), then merge its FSDP shards.

Under ``<folder>/verl/``: ``train.parquet`` (:mod:`.rows`), ``reward.json`` and
``reward_function.py`` (:mod:`.reward`), ``overrides.txt`` (the command's Hydra overrides,
one a line, for the record), ``main_ppo.log`` (verl's output) and ``checkpoints/`` (verl's
``global_step_N/actor`` FSDP shards). verl's own merger (``python -m verl.model_merger merge
--backend fsdp``, as the authors' ``PPO/convert.sh``) writes the HF policy to ``<folder>/final``,
which prb's later steps read as they read TRL's. A folder that already has ``final`` is not
trained again; a run started again resumes from verl's newest checkpoint (``resume_mode=auto``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

from prb_tasks.common.errors import PRBError
from prb_tasks.rl.presets import RLPreset
from prb_tasks.rl.prompts import RLPrompt
from prb_tasks.rl.verl_engine.overrides import build_overrides
from prb_tasks.rl.verl_engine.reward import RewardConfig, write_reward_module
from prb_tasks.rl.verl_engine.rows import write_parquet

FINAL = "final"
#: The file verl writes next to its checkpoints, naming the newest step.
LATEST = "latest_checkpointed_iteration.txt"


def newest_actor(checkpoints: Path) -> Path:
    """The newest ``global_step_N/actor`` folder verl wrote under ``checkpoints``.

    Args:
        checkpoints: ``trainer.default_local_dir``.
    """
    marker = checkpoints / LATEST
    if not marker.is_file():
        raise PRBError(f"prb rl: verl finished without a checkpoint ({marker} is missing); see "
                       f"{checkpoints.parent / 'main_ppo.log'}")
    step = marker.read_text(encoding="utf-8").strip()
    actor = checkpoints / f"global_step_{step}" / "actor"
    if not actor.is_dir():
        raise PRBError(f"prb rl: {marker} names step {step}, but {actor} does not exist; delete {checkpoints} "
                       "and run the same command again")
    return actor


#: verl's console logger writes one line per step: ``step:N - key:value - key:value ...``.
STEP_LINE = re.compile(r"\bstep:(\d+) - ")
#: The figures of a step line repeated on the terminal, and their names there.
SHOWN = {"critic/score/mean": "score", "critic/rewards/mean": "reward", "actor/pg_loss": "pg_loss",
         "timing_s/step": "s/step"}


def progress(line: str, label: str) -> Optional[str]:
    """The terminal's line for one of verl's step lines (None for any other line).

    Args:
        line: a line of verl's output.
        label: what the line names (the reward model).
    """
    match = STEP_LINE.search(line)
    if match is None:
        return None
    fields = dict(part.split(":", 1) for part in line[match.start():].split(" - ") if ":" in part)
    shown = "  ".join(f"{name} {fields[key].strip()[:10]}" for key, name in SHOWN.items() if key in fields)
    return f"prb rl: {label}: verl step {match.group(1)}  {shown}".rstrip()


def main_ppo_command(overrides: list[str]) -> list[str]:
    """What prb runs to train (after the python executable): verl's ``main_ppo`` with ``overrides``.

    Args:
        overrides: the Hydra overrides (:func:`~prb_tasks.rl.verl_engine.overrides.build_overrides`).
    """
    return ["-m", "verl.trainer.main_ppo", *overrides]


def merge_command(actor: Path, final: Path) -> list[str]:
    """What prb runs to merge (after the python executable): verl's FSDP merger, as the authors' ``PPO/convert.sh``.

    Args:
        actor: verl's ``global_step_N/actor`` folder (FSDP shards, ``fsdp_config.json``, ``huggingface/``).
        final: where the merged HF policy goes.
    """
    return ["-m", "verl.model_merger", "merge", "--backend", "fsdp", "--local_dir", str(actor),
            "--target_dir", str(final)]


def _run(command: list[str], log: Path, what: str, env: dict[str, str], label: str = "") -> None:
    """Run ``command`` with its output appended to ``log`` and each training step shown on one line;
    one line naming the log when it fails."""
    with log.open("a", encoding="utf-8") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                              encoding="utf-8", errors="replace") as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                out.write(line)
                shown = progress(line, label) if label else None
                if shown:
                    print(shown[:120], file=sys.stderr, flush=True)
            status = proc.wait()
    if status != 0:
        last = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
        raise PRBError(f"prb rl: {what} failed (exit {status}); last line of {log}: "
                       f"{last[-1][:200] if last else '(empty)'}")


def train_policy_verl(policy: str, prompts: list[RLPrompt], reward: RewardConfig, preset: RLPreset, folder: Path,
                      *, experiment: str, gpus_per_node: int, nodes: int = 1, max_steps: Optional[int] = None,
                      ray_address: Optional[str] = None, data_source: str = "prb-rl") -> Path:
    """Train ``policy`` with verl against ``reward``; the folder of the merged (HF) policy.

    Args:
        policy: hub name or folder of the starting policy.
        prompts: the training questions.
        reward: what the reward function scores with.
        preset: the settings (``paper``: the authors').
        folder: the run's folder (``verl/`` inputs and checkpoints, then ``final``).
        experiment: the trainer's experiment name (the reward model's slug).
        gpus_per_node: GPUs verl uses on each machine.
        nodes: machines in the Ray cluster.
        max_steps: stop after this many PPO steps (None: one epoch).
        ray_address: a running Ray cluster (None: verl starts one here).
        data_source: every row's ``data_source``.
    """
    final = folder / FINAL
    if (final / "config.json").is_file():
        print(f"prb rl: {final} exists; not training again (delete it to retrain)", file=sys.stderr)
        return final
    work = folder / "verl"
    parquet = write_parquet(prompts, work / "train.parquet", data_source)
    module = write_reward_module(work, reward)
    checkpoints = work / "checkpoints"
    overrides = build_overrides(parquet=parquet.resolve(), policy=policy, reward_module=module.resolve(),
                                checkpoints=checkpoints.resolve(), experiment=experiment, preset=preset,
                                gpus_per_node=gpus_per_node, nodes=nodes, max_steps=max_steps,
                                reward_workers=1 if reward.loads_model else None)
    (work / "overrides.txt").write_text("".join(line + "\n" for line in overrides), encoding="utf-8")
    env = dict(os.environ)
    if ray_address:
        env["RAY_ADDRESS"] = ray_address
    log = work / "main_ppo.log"
    print(f"prb rl: verl main_ppo: {len(prompts)} prompts, {nodes} node(s) x {gpus_per_node} GPU(s); log in {log}",
          file=sys.stderr)
    _run([sys.executable, *main_ppo_command(overrides)], log, "verl main_ppo", env, experiment)
    actor = newest_actor(checkpoints)
    print(f"prb rl: merging {actor} into {final} (verl.model_merger)", file=sys.stderr)
    _run([sys.executable, *merge_command(actor, final)], log, "verl model_merger", env)
    if not (final / "config.json").is_file():
        raise PRBError(f"prb rl: verl's merger wrote no {final / 'config.json'}; see {log}")
    return final

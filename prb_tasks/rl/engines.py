"""The training engines of ``prb rl``: TRL's GRPO on one machine (default) and verl's PPO (the authors').

Each engine says which packages it needs, refuses what it cannot run before anything is
written (:meth:`Engine.preflight`), checks each ``--rm`` before any training and trains one
policy against one reward model, returning the folder of an HF policy; every other step of
``prb rl`` (answers, grading, runs) is the same for both.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Optional

from prb_tasks.common.errors import PRBError
from prb_tasks.rl.presets import RLPreset
from prb_tasks.rl.prompts import RLPrompt


class Engine:
    """The interface; see :class:`TrlEngine` and :class:`VerlEngine`."""

    name = ""
    needs: tuple[str, ...] = ()
    extra = "rl"

    def preflight(self, args: argparse.Namespace, preset: RLPreset) -> None:
        """Refuse, in one line, what this engine cannot run with ``preset`` (nothing written yet)."""

    def record(self) -> dict[str, str]:
        """What the run's results file records about the engine: its name and its package's version."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            installed = version(self.name)
        except PackageNotFoundError:
            installed = "unknown"
        return {"name": self.name, f"{self.name}_version": installed}

    def check_rm(self, rm_args: str, reward_url: Optional[str]) -> Any:
        """Load (or check) one ``--rm``; what :meth:`train` receives as ``rm``."""
        raise NotImplementedError

    def train(self, policy: str, prompts: list[RLPrompt], rm_args: str, rm: Any, preset: RLPreset, folder: Path,
              args: argparse.Namespace) -> Path:
        """Train ``policy`` against one reward model; the folder of the trained HF policy."""
        raise NotImplementedError


class TrlEngine(Engine):
    """TRL's GRPOTrainer in this process, prb-rm's score as the reward (:mod:`prb_tasks.rl.train`)."""

    name = "trl"
    needs = ("torch", "transformers", "trl")

    def preflight(self, args: argparse.Namespace, preset: RLPreset) -> None:
        given = [flag for flag, value in (("--ray-address", getattr(args, "ray_address", None)),
                                          ("--nodes", getattr(args, "nodes", 1) != 1 or None),
                                          ("--gpus-per-node", getattr(args, "gpus_per_node", None))) if value]
        if given:
            raise PRBError(f"prb rl: {given[0]} is an option of --engine verl (TRL trains on this machine); add "
                           "--engine verl or leave it out")

    def check_rm(self, rm_args: str, reward_url: Optional[str]) -> Any:
        from prb_tasks.rl.reward import load_rm

        return load_rm(rm_args, reward_url)

    def train(self, policy: str, prompts: list[RLPrompt], rm_args: str, rm: Any, preset: RLPreset, folder: Path,
              args: argparse.Namespace) -> Path:
        from prb_tasks.rl.reward import RMReward
        from prb_tasks.rl.train import train_policy

        reward = RMReward(rm, preset.reward_scale, preset.reward_on_error)
        final = train_policy(policy, prompts, reward, preset, folder, args.seed, label=rm_args)
        if reward.failures:
            print(f"prb rl: {rm_args}: {reward.failures} rewards were the error value {preset.reward_on_error}",
                  file=sys.stderr)
        return final


class VerlEngine(Engine):
    """verl's PPO (``main_ppo``) in its own processes, on this machine's GPUs or a Ray cluster
    (:mod:`prb_tasks.rl.verl_engine`)."""

    name = "verl"
    needs = ("torch", "transformers", "datasets")
    extra = "verl"

    def preflight(self, args: argparse.Namespace, preset: RLPreset) -> None:
        from prb_tasks.rl.verl_engine.batches import check_batches
        from prb_tasks.rl.verl_engine.overrides import VerlSettings
        from prb_tasks.rl.verl_engine.preflight import check

        if args.reward_url and len(args.rm) > 1:
            raise PRBError("prb rl --engine verl: --reward-url serves one reward model; give one --rm with it "
                           "(its label for prb validity) and run once per served model")
        args.ray_address = check(args.ray_address)
        if args.gpus_per_node is None:
            import torch

            args.gpus_per_node = max(1, torch.cuda.device_count())
        check_batches(preset, args.gpus_per_node, args.nodes, VerlSettings().rollout_n)

    def check_rm(self, rm_args: str, reward_url: Optional[str]) -> Any:
        if reward_url:
            return None  # served: the authors' reward server scores, not prb-rm
        from prb_tasks.rl.reward import load_rm
        from prb_tasks.rl.verl_engine.reward import RewardConfig, VerlReward

        # A typo, or an RM that cannot score in verl's reward worker, fails now, not an hour in.
        probe = VerlReward(RewardConfig(rm_args=rm_args))
        probe._rm = load_rm(rm_args)
        try:
            probe.probe()
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the scorer raises, named in one line
            raise PRBError(f"prb rl --engine verl: --rm '{rm_args}' cannot score in verl's reward worker, which "
                           f"has only the question and the posts' text ({str(exc).splitlines()[0]}); use a "
                           "reward model that reads them (pretrained=..., endpoint=...)") from None
        return None  # verl's reward worker loads its own copy

    def train(self, policy: str, prompts: list[RLPrompt], rm_args: str, rm: Any, preset: RLPreset, folder: Path,
              args: argparse.Namespace) -> Path:
        from prb_tasks.rl.verl_engine.reward import RewardConfig
        from prb_tasks.rl.verl_engine.train import train_policy_verl

        divide_by = 1 / preset.reward_scale
        reward = RewardConfig(url=args.reward_url, divide_by=divide_by, on_error=preset.reward_on_error) \
            if args.reward_url else RewardConfig(rm_args=rm_args, divide_by=divide_by,
                                                 on_error=preset.reward_on_error)
        return train_policy_verl(policy, prompts, reward, preset, folder, experiment=folder.name,
                                 gpus_per_node=args.gpus_per_node, nodes=args.nodes, max_steps=args.max_steps,
                                 ray_address=args.ray_address, data_source=getattr(args, "data_source", "prb-rl"))


ENGINES: dict[str, Engine] = {engine.name: engine for engine in (TrlEngine(), VerlEngine())}

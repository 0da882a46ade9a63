"""Runs verl's own code on the files ``prb rl --engine verl`` writes; run by the verl side environment's python.

Not a test module: tests/rl/test_verl_real.py writes prb's files with prb's code, then runs this
file with the python of the side environment that holds the real verl wheel (``bash .ci/verl-env``)
and asserts on the JSON it prints. Each command goes through verl's public entry points, as
``main_ppo`` and verl's workers call them:

- ``validate CASES``: compose verl's ``ppo_trainer`` config with each case's overrides (Hydra's
  compose API on verl's own config folder) and run ``verl.utils.config.validate_config`` as
  ``main_ppo.main`` does; ``"ok"`` or the error's first line per case.
- ``split CASES``: each case's rollout batch cut as verl's engine workers cut it at an update:
  every GPU's share, verl's ``make_iterator`` over it in mini-batches of the GPU's share of the
  PPO mini-batch, verl's ``prepare_micro_batches`` on each; ``"ok"`` or what verl raised.
- ``dataset OVERRIDES``: verl's ``RLHFDataset`` on ``data.train_files`` with the policy's tokenizer
  (``actor_rollout_ref.model.path``, loaded with verl's ``hf_tokenizer``) and ``config.data``.
- ``reward OVERRIDES RESPONSES``: every row of that dataset with one response each (tokenized as
  a rollout's ``responses``), scored by verl's ``RewardLoopWorker`` (its reward manager, by
  default ``naive``, with the custom reward function the config names).

Each prints one JSON object on its last line of stdout.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any


def compose(overrides: list[str]) -> Any:
    """verl's ``ppo_trainer`` config with ``overrides``, composed as ``main_ppo``'s ``@hydra.main`` does."""
    import verl.trainer.main_ppo as main_ppo
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    folder = Path(main_ppo.__file__).parent / "config"
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(folder), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def validate(cases: dict[str, list[str]]) -> dict[str, str]:
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    out = {}
    for name, overrides in cases.items():
        config = compose(overrides)
        try:
            validate_config(config=config, use_reference_policy=need_reference_policy(config),
                            use_critic=need_critic(config))
            out[name] = "ok"
        except (AssertionError, ValueError) as exc:
            out[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return out


def split(cases: dict[str, dict[str, int]]) -> dict[str, str]:
    import torch
    from tensordict import TensorDict
    from verl.utils import tensordict_utils as tu
    from verl.workers.engine.utils import prepare_micro_batches

    out = {}
    for name, case in cases.items():
        gpus = case["gpus"]
        try:
            share = case["rollout"] // gpus
            data = TensorDict({"x": torch.arange(share)}, batch_size=[share])
            # engine_workers.train_mini_batch asserts this before it cuts (the one check restated here).
            assert case["mini"] % gpus == 0, f"mini_batch_size={case['mini']} over {gpus} GPUs"
            for mini in tu.make_iterator(data, mini_batch_size=case["mini"] // gpus, epochs=1):
                tu.assign_non_tensor(mini, use_dynamic_bsz=False, micro_batch_size_per_gpu=case["micro"])
                prepare_micro_batches(mini)
            out[name] = "ok"
        except (AssertionError, ValueError, ZeroDivisionError) as exc:
            out[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return out


def dataset(config: Any) -> Any:
    from verl.utils import hf_tokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tokenizer = hf_tokenizer(config.actor_rollout_ref.model.path)
    return RLHFDataset(data_files=config.data.train_files, tokenizer=tokenizer, config=config.data), tokenizer


def plain(value: Any) -> Any:
    """numpy arrays and scalars inside a row, as JSON."""
    import numpy as np

    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def rows(config: Any) -> dict[str, Any]:
    data, _ = dataset(config)
    keys = ("data_source", "raw_prompt", "reward_model", "extra_info", "index")
    return {"length": len(data), "rows": [{k: plain(data[i][k]) for k in keys} for i in range(len(data))]}


def rewards(config: Any, responses: list[str]) -> dict[str, Any]:
    import numpy as np
    import torch
    from verl import DataProto
    from verl.experimental.reward_loop import RewardLoopWorker

    data, tokenizer = dataset(config)
    items = [data[i] for i in range(len(data))]
    prompts = [tokenizer.apply_chat_template(item["raw_prompt"], add_generation_prompt=True, tokenize=True)
               for item in items]
    prompts = [p["input_ids"] if isinstance(p, dict) or hasattr(p, "keys") else p for p in prompts]
    answers = [tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
               for text in responses]
    width_p, width_r = max(map(len, prompts)), max(map(len, answers))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    # verl's rollouts: prompts padded on the left, responses on the right, one attention mask over both.
    prompt_ids = torch.tensor([[pad] * (width_p - len(p)) + list(p) for p in prompts])
    response_ids = torch.tensor([list(r) + [pad] * (width_r - len(r)) for r in answers])
    mask = torch.tensor([[0] * (width_p - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (width_r - len(r))
                         for p, r in zip(prompts, answers)])
    non_tensors = {key: np.array([item[key] for item in items], dtype=object)
                   for key in ("data_source", "reward_model", "extra_info", "raw_prompt")}
    batch = DataProto.from_dict(tensors={"prompts": prompt_ids, "responses": response_ids,
                                         "input_ids": torch.cat([prompt_ids, response_ids], dim=1),
                                         "attention_mask": mask},
                                non_tensors=non_tensors)
    worker = RewardLoopWorker(config)
    # The worker keeps the event loop it was made with (verl runs it as a Ray actor on that loop).
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(batch))
    return {"manager": type(worker.reward_manager).__name__, "scores": [float(o["reward_score"]) for o in outputs]}


def main(argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    try:
        if command == "validate":
            result: Any = validate(json.loads(Path(args[0]).read_text(encoding="utf-8")))
        elif command == "split":
            result = split(json.loads(Path(args[0]).read_text(encoding="utf-8")))
        else:
            config = compose(Path(args[0]).read_text(encoding="utf-8").splitlines())
            if command == "dataset":
                result = rows(config)
            elif command == "reward":
                result = rewards(config, json.loads(Path(args[1]).read_text(encoding="utf-8")))
            else:
                raise SystemExit(f"unknown command {command}")
    except Exception as exc:  # noqa: BLE001 - the test reads what verl raised, by type and first line
        traceback.print_exc()
        result = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

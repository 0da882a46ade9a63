"""``prb rl --engine verl`` through verl's own code: the real pinned wheel, on CPU (the ``verl_real`` tier).

tests/rl/test_verl.py proves prb sets what the authors' scripts set; this module proves verl obeys
it. prb's own code writes the files ``prb rl --engine verl`` writes (the overrides, train.parquet,
the reward module, a policy), then the python of a side environment holding the real
``verl==VERL_VERSION`` wheel (``bash .ci/verl-env DIR``: verl ``--no-deps`` plus what these checks
import, CPU torch; .ci/run builds it and sets ``PRB_VERL_PYTHON``) runs verl's entry points on them:
``main_ppo``'s own Hydra composition (``--cfg job --resolve``), ``validate_config``, ``RLHFDataset``,
the reward loop (``RewardLoopWorker``, ``NaiveRewardManager``), the FSDP model merger, and the
engine's mini/micro-batch split (tests/rl/verl_real_driver.py). Without ``PRB_VERL_PYTHON`` every
test here skips, naming how to build the environment; with it, a verl other than the pin fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.rl.presets import PRESETS
from prb_tasks.rl.prompts import RLPrompt
from prb_tasks.rl.verl_engine.batches import gpu_counts, micro_batch
from prb_tasks.rl.verl_engine.overrides import VerlSettings, build_overrides
from prb_tasks.rl.verl_engine.pin import VERL_VERSION
from prb_tasks.rl.verl_engine.reward import RewardConfig, write_reward_module
from prb_tasks.rl.verl_engine.rows import write_parquet
from prb_tasks.rl.verl_engine.train import merge_command, newest_actor
from tests.watchdog import run_watched

pytestmark = pytest.mark.verl_real

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("verl_real_driver.py")
ENV = "PRB_VERL_PYTHON"


@pytest.fixture(scope="module")
def verl_python() -> str:
    """The side environment's python; skip without one, fail when its verl is not the pin."""
    python = os.environ.get(ENV)
    if not python:
        pytest.skip(f"the verl_real tier runs the real verl {VERL_VERSION} in a side environment: build one with "
                    f"`bash .ci/verl-env DIR` and set {ENV}=DIR/bin/python (.ci/run does both)")
    found = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('verl'))"],
                           capture_output=True, text=True, check=False)
    assert found.stdout.strip() == VERL_VERSION, \
        f"{ENV}={python} has verl {found.stdout.strip() or '(none)'}, prb pins {VERL_VERSION}: {found.stderr[-300:]}"
    return python


def side(python: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the side environment's python (prb importable, as in verl's Ray workers on a prb machine)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               RAY_DEDUP_LOGS="0")
    env.pop("VIRTUAL_ENV", None)
    return run_watched([python, *args], capture_output=True, text=True, cwd=cwd, env=env)


def driver(python: str, *args: str, cwd: Path) -> Any:
    done = side(python, str(DRIVER), *args, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in result, f"{result['error']}\n{done.stderr[-3000:]}"
    return result


class _Score(BaseHTTPRequestHandler):
    """The authors' reward server shape: score = the response's length in characters."""

    seen: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        type(self).seen.append(body)
        reply = json.dumps({"score": len(body["response_text"])}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def score_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Score)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Score.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/score"
    finally:
        server.shutdown()
        server.server_close()


PROMPTS = [RLPrompt(f"art/{i}", (("system", "Answer for this person."), ("user", f"Question {i} with posts.")),
                    "rm", "k", f"Which lens, {i}?", f"Post 1 (Category: Photo):\nI shoot film {i}.")
           for i in range(3)]


@pytest.fixture(scope="module")
def policy(tmp_path_factory) -> Path:
    from prb_tasks.testing.tiny_policy import build_verl_policy

    return build_verl_policy(tmp_path_factory.mktemp("policy") / "policy")


def _files(folder: Path, policy: Path, reward: RewardConfig, preset: str = "paper", gpus: int = 4, nodes: int = 1,
           **extra: Any) -> tuple[Path, list[str]]:
    """What train_policy_verl writes before it starts main_ppo: parquet, reward module, overrides file."""
    work = folder / "verl"
    parquet = write_parquet(PROMPTS, work / "train.parquet", "prb-rl")
    module = write_reward_module(work, reward)
    overrides = build_overrides(parquet=parquet.resolve(), policy=str(policy), reward_module=module.resolve(),
                                checkpoints=(work / "checkpoints").resolve(), experiment="rm-x",
                                preset=PRESETS[preset], gpus_per_node=gpus, nodes=nodes, **extra)
    path = work / "overrides.txt"
    path.write_text("".join(line + "\n" for line in overrides), encoding="utf-8")
    return path, overrides


def test_main_ppo_resolves_the_values_prb_sets(tmp_path, verl_python, policy) -> None:
    """main_ppo's own Hydra entry point (``--cfg job --resolve``): what its TaskRunner reads."""
    import yaml

    _, overrides = _files(tmp_path, policy, RewardConfig(rm_args="scorer=length"), gpus=8, nodes=2, max_steps=3,
                          reward_workers=1)
    done = side(verl_python, "-m", "verl.trainer.main_ppo", *overrides, "--cfg", "job", "--resolve", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    config = yaml.safe_load(done.stdout)
    reward = config["reward"]
    # Red before: prb wrote the top-level block, a stub verl 0.9 never reads; main_ppo saw path null.
    assert reward["custom_reward_function"]["path"] == str((tmp_path / "verl" / "reward_function.py").resolve())
    assert reward["custom_reward_function"]["name"] == "compute_score"
    assert reward["num_workers"] == 1
    paper = PRESETS["paper"]
    data, actor, rollout = config["data"], config["actor_rollout_ref"]["actor"], config["actor_rollout_ref"]["rollout"]
    assert (data["train_batch_size"], data["max_prompt_length"], data["max_response_length"]) == (128, 8192, 512)
    assert data["filter_overlong_prompts"] is True and data["train_files"] == str(tmp_path / "verl" / "train.parquet")
    assert (actor["ppo_mini_batch_size"], actor["optim"]["lr"], actor["use_dynamic_bsz"]) == (16, 5e-7, False)
    # 16 prompts over 16 GPUs: one each, so one per pass (the preset's 4 would not divide it).
    assert actor["ppo_micro_batch_size_per_gpu"] == 1 == micro_batch(paper, 16, 1)
    assert (rollout["name"], rollout["n"], rollout["temperature"], rollout["top_p"], rollout["top_k"]) == \
        ("vllm", 1, 1.0, 1.0, 0)
    assert (rollout["gpu_memory_utilization"], rollout["max_num_seqs"], rollout["load_format"]) == \
        (0.4, 4, "safetensors")
    # verl 0.9's engine workers assert the per-GPU log-prob micro-batch is set (engine_workers.py, init_model).
    assert rollout["log_prob_micro_batch_size_per_gpu"] == 1 and rollout["log_prob_micro_batch_size"] is None
    assert config["actor_rollout_ref"]["model"]["path"] == str(policy)
    critic = config["critic"]
    assert (critic["optim"]["lr"], critic["ppo_micro_batch_size_per_gpu"], critic["ppo_mini_batch_size"]) == \
        (5e-6, 1, 16)
    assert config["algorithm"]["use_kl_in_reward"] is False
    trainer = config["trainer"]
    assert (trainer["nnodes"], trainer["n_gpus_per_node"], trainer["total_training_steps"]) == (2, 8, 3)
    assert (trainer["experiment_name"], trainer["logger"], trainer["save_freq"]) == ("rm-x", ["console"], 10000)


def test_validate_config_passes_for_each_preset_where_prb_starts(tmp_path, verl_python, policy) -> None:
    """verl's validate_config (as main_ppo.main calls it) for each preset at 1 and 8 GPUs and every count
    prb accepts; where prb refuses (before anything is written), the reason is verl's split rule."""
    cases: dict[str, list[str]] = {}
    for name in PRESETS:
        for gpus in sorted({1, 8, *gpu_counts(PRESETS[name], VerlSettings().rollout_n)}):
            if gpus in gpu_counts(PRESETS[name], VerlSettings().rollout_n):
                cases[f"{name}@{gpus}"] = _files(tmp_path / f"{name}{gpus}", policy, RewardConfig(url="http://x"),
                                                 name, gpus)[1]
    assert {"paper@1", "paper@8", "smoke@1"} <= set(cases)
    result = driver(verl_python, "validate", str(_json(tmp_path / "cases.json", cases)), cwd=tmp_path)
    assert result == {name: "ok" for name in cases}


def test_the_first_update_splits_where_prb_starts(tmp_path, verl_python) -> None:
    """verl's own mini-batch iterator and micro-batch split (the engine's first update) on each GPU count prb
    accepts, and its refusal on one prb refuses (paper over 32 GPUs: the docs' old multi-node example)."""
    n = VerlSettings().rollout_n
    cases = {f"{name}@{gpus}": {"rollout": preset.prompts_per_rollout * n, "mini": preset.prompts_per_update * n,
                                "gpus": gpus, "micro": micro_batch(preset, gpus, n)}
             for name, preset in PRESETS.items() for gpus in gpu_counts(preset, n)}
    refused = {"paper@32": {"rollout": 128, "mini": 16, "gpus": 32, "micro": 1}}
    result = driver(verl_python, "split", str(_json(tmp_path / "split.json", {**cases, **refused})), cwd=tmp_path)
    assert {k: v for k, v in result.items() if k in cases} == {name: "ok" for name in cases}
    assert result["paper@32"] != "ok"


def _json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_rlhf_dataset_reads_prbs_parquet(tmp_path, verl_python, policy) -> None:
    path, _ = _files(tmp_path, policy, RewardConfig(url="http://x"))
    result = driver(verl_python, "dataset", str(path), cwd=tmp_path)
    assert result["length"] == len(PROMPTS)
    for row, prompt in zip(result["rows"], PROMPTS):
        assert row["data_source"] == "prb-rl"
        assert row["raw_prompt"] == prompt.chat()
        assert row["extra_info"]["query"] == prompt.question and row["extra_info"]["profile"] == prompt.profile
        assert row["reward_model"] == {"ground_truth": ""}


def test_verls_reward_loop_calls_prbs_reward(tmp_path, verl_python, policy, score_url) -> None:
    """verl's RewardLoopWorker, with the reward manager the config names, on a DataProto of rollouts.

    Red before: with the top-level key, the worker fell back to verl's default scorer, which raises
    ``NotImplementedError: Reward function is not implemented for data_source='prb-rl'``.
    """
    path, _ = _files(tmp_path, policy, RewardConfig(url=score_url))
    responses = ["A fast 35mm prime.", "Any zoom", "Go with the fifty."]
    result = driver(verl_python, "reward", str(path), str(_json(tmp_path / "responses.json", responses)),
                    cwd=tmp_path)
    assert result["manager"] == "NaiveRewardManager"
    # The served score (characters) / 10; none of them the 0.5 a failure gives.
    assert result["scores"] == [len(text) / 10 for text in responses]
    assert sorted((s["response_text"], s["query"], s["profile"]) for s in _Score.seen) == \
        sorted((text, p.question, p.profile) for text, p in zip(responses, PROMPTS))


CHECKPOINT = r'''
import json, os, sys
from pathlib import Path
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

policy, actor = Path(sys.argv[1]), Path(sys.argv[2])
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[3])
dist.init_process_group("gloo", rank=0, world_size=1)
mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("fsdp",))
model = AutoModelForCausalLM.from_pretrained(policy)
state = {k: distribute_tensor(v, mesh, [Shard(0)]) for k, v in model.state_dict().items()}
actor.mkdir(parents=True)
torch.save(state, actor / "model_world_size_1_rank_0.pt")
(actor / "fsdp_config.json").write_text(json.dumps({"FSDP_version": 2, "world_size": 1}))
AutoConfig.from_pretrained(policy).save_pretrained(actor / "huggingface")
AutoTokenizer.from_pretrained(policy).save_pretrained(actor / "huggingface")
dist.destroy_process_group()
'''


def _checkpoint(policy: Path, checkpoints: Path, step: int = 2) -> Path:
    """A verl FSDP checkpoint of ``policy`` (one rank, DTensor shards) as verl's checkpoint manager lays it out."""
    from tests.runner import closed_port

    actor = checkpoints / f"global_step_{step}" / "actor"
    done = run_watched([sys.executable, "-c", CHECKPOINT, str(policy), str(actor), str(closed_port())],
                       capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    (checkpoints / "latest_checkpointed_iteration.txt").write_text(str(step))
    return checkpoints


def test_verls_merger_turns_the_bench_policy_into_an_hf_policy(tmp_path, verl_python, policy) -> None:
    """prb's merge command, run with verl's merger on the tiny Llama bench_verl.py trains; GPT-2 (the bench's
    policy before) is an architecture verl's merger does not know."""
    import torch
    from transformers import AutoModelForCausalLM

    actor = newest_actor(_checkpoint(policy, tmp_path / "checkpoints"))
    final = tmp_path / "final"
    done = side(verl_python, *merge_command(actor, final), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    merged, original = (AutoModelForCausalLM.from_pretrained(p).state_dict() for p in (final, policy))
    assert set(merged) <= set(original) and len(merged) >= len(original) - 1  # tied lm_head may be left out
    # The merger writes the weights in the checkpoint's dtype or in bfloat16 (verl's default): compare so.
    assert all(torch.equal(merged[k], original[k].to(merged[k].dtype)) for k in merged), \
        {k: (merged[k].dtype, original[k].dtype) for k in list(merged)[:2]}
    from prb_tasks.testing.tiny_policy import build_tiny_policy

    gpt2 = build_tiny_policy(tmp_path / "gpt2", arch="gpt2")
    gpt2_actor = newest_actor(_checkpoint(gpt2, tmp_path / "gpt2-ck"))
    refused = side(verl_python, *merge_command(gpt2_actor, tmp_path / "gpt2-final"),
                   cwd=tmp_path)
    assert refused.returncode != 0 and "Unknown architecture ['GPT2LMHeadModel']" in refused.stderr

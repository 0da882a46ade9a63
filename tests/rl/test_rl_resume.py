"""``prb rl`` survives a kill -9 (issue 48.1): a checkpoint or ``final/`` counts only when whole, a
damaged newest checkpoint is set aside with one line and the one before it used, and the
training log holds each step once after the resume.

The kill tests train a tiny policy in a child process that kills itself at a chosen point of a
save (wrappers the child installs around the Trainer's own save steps), never by timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from prb_tasks.rl.checkpoints import SEAL, problem, resume_point, seal

ROOT = Path(__file__).resolve().parents[2]


def _checkpoint(folder: Path, step: int, sealed: bool = True) -> Path:
    path = folder / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "model.safetensors").write_bytes(bytes([step]) * 64)
    (path / "trainer_state.json").write_text(json.dumps({"global_step": step}), encoding="utf-8")
    if sealed:
        seal(path, {"step": step})
    return path


def test_newest_whole_checkpoint_is_used_and_broken_newer_ones_set_aside(tmp_path, capsys):
    _checkpoint(tmp_path, 2)
    _checkpoint(tmp_path, 4)
    _checkpoint(tmp_path, 6, sealed=False)  # killed while the Trainer wrote it
    (tmp_path / "checkpoint-4" / "model.safetensors").write_bytes(b"\0" * 64)  # changed after its seal
    assert resume_point(tmp_path) == tmp_path / "checkpoint-2"
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"prb rl: {tmp_path / 'checkpoint-6'} is incomplete: a run was stopped while writing it; set aside as "
        "checkpoint-6.damaged, resuming from checkpoint-4",
        f"prb rl: {tmp_path / 'checkpoint-4'} is damaged: {tmp_path / 'checkpoint-4' / 'model.safetensors'} is "
        "not the file written with it (its sha256 differs); set aside as checkpoint-4.damaged, resuming from "
        "checkpoint-2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-2", "checkpoint-4.damaged",
                                                          "checkpoint-6.damaged"]
    # The Trainer's own choice no longer sees the broken ones.
    from transformers.trainer_utils import get_last_checkpoint

    assert get_last_checkpoint(str(tmp_path)) == str(tmp_path / "checkpoint-2")


def test_only_broken_checkpoints_mean_training_from_the_start(tmp_path, capsys):
    _checkpoint(tmp_path, 2, sealed=False)
    assert resume_point(tmp_path) is None
    assert capsys.readouterr().err.strip().endswith("set aside as checkpoint-2.damaged, no earlier checkpoint: "
                                                    "training from the start")
    assert resume_point(tmp_path / "missing") is None
    path = _checkpoint(tmp_path, 2, sealed=True)  # a second damaged one keeps the first aside
    (path / SEAL).write_text("{", encoding="utf-8")
    assert problem(path) == "incomplete: a run was stopped while writing it"
    assert resume_point(tmp_path) is None
    assert (tmp_path / "checkpoint-2.damaged-2").is_dir()


_CHILD = """
import os, signal, sys
from pathlib import Path

from transformers import Trainer
from trl import GRPOTrainer

from prb_tasks.rl.presets import get_preset
from prb_tasks.rl.prompts import build_prompts, split
from prb_tasks.rl.reward import RMReward, load_rm
from prb_tasks.rl.train import train_policy

policy, folder, mode = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if mode == "kill-in-checkpoint-4":  # the model is written, the optimizer and trainer state not yet
    real = Trainer._save_optimizer_and_scheduler

    def killing(self, output_dir):
        if os.path.basename(output_dir) == "checkpoint-4":
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, output_dir)

    Trainer._save_optimizer_and_scheduler = killing
if mode == "kill-in-final":  # the policy's weights are written, its tokenizer not yet
    real_save = GRPOTrainer.save_model

    def killing_save(self, output_dir=None, _internal_call=False):
        real_save(self, output_dir, _internal_call)
        if "final" in os.path.basename(str(output_dir)):
            os.kill(os.getpid(), signal.SIGKILL)

    GRPOTrainer.save_model = killing_save
preset = get_preset("smoke", max_steps=6)
train, _ = split(build_prompts(preset.train_k, preset.bon_preset, "sample", None, {"max_post_chars": 200}),
                 preset.test_fraction)
print(train_policy(policy, train[:8], RMReward(load_rm("scorer=length", None), 1.0, 0.0), preset, folder, 0))
"""


def _child(policy: Path, folder: Path, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _CHILD, str(policy), str(folder), mode], cwd=ROOT,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})


@pytest.fixture
def policy(tmp_path) -> Path:
    pytest.importorskip("trl")
    from prb_tasks.testing.tiny_policy import build_tiny_policy

    return build_tiny_policy(tmp_path / "policy", seed=0)


@pytest.mark.slow
def test_kill_during_a_checkpoint_resumes_from_the_one_before_and_logs_each_step_once(tmp_path, policy):
    folder = tmp_path / "run"
    killed = _child(policy, folder, "kill-in-checkpoint-4")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert (folder / "checkpoint-4").is_dir() and not (folder / "checkpoint-4" / SEAL).exists()
    resumed = _child(policy, folder, "run")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    err = resumed.stderr
    assert (f"prb rl: {folder / 'checkpoint-4'} is incomplete: a run was stopped while writing it; set aside as "
            "checkpoint-4.damaged, resuming from checkpoint-2") in err, err[-3000:]
    assert f"prb rl: resuming from {folder / 'checkpoint-2'}" in err
    assert "Traceback" not in err
    records = [json.loads(line) for line in (folder / "train_log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["step"] for r in records if "loss" in r] == [1, 2, 3, 4, 5, 6], records
    assert [r["step"] for r in records if "train_runtime" in r] == [6]
    assert problem(folder / "final") is None and problem(folder / "checkpoint-6") is None


@pytest.mark.slow
def test_kill_while_final_is_written_leaves_no_final_and_the_rerun_writes_it_whole(tmp_path, policy):
    folder = tmp_path / "run"
    killed = _child(policy, folder, "kill-in-final")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert not (folder / "final").exists()  # not a folder that counts as "already trained"
    again = _child(policy, folder, "run")
    assert again.returncode == 0, again.stderr[-3000:]
    # checkpoint-6 is at max_steps: it is the policy, published as it is, never trained a 7th step
    # (issue 62.5: the Trainer given it printed "step 7/6" and published a 7-step policy).
    assert f"prb rl: {folder / 'checkpoint-6'} is at step 6 of 6: it is the trained policy" in again.stderr
    assert "7/6" not in again.stderr and f"{folder / 'final'} exists; not training again" not in again.stderr
    records = [json.loads(line) for line in (folder / "train_log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert max(r["step"] for r in records) == 6, records
    from safetensors.torch import load_file

    final, saved = load_file(str(folder / "final" / "model.safetensors")), load_file(
        str(folder / "checkpoint-6" / "model.safetensors"))
    assert final.keys() == saved.keys() and all(bool((final[k] == saved[k]).all()) for k in final)
    assert problem(folder / "final") is None
    assert (folder / "final" / "tokenizer_config.json").is_file()
    from prb_tasks.rl.policy import load_policy

    load_policy(str(folder / "final"))
    third = _child(policy, folder, "run")
    assert f"prb rl: {folder / 'final'} exists; not training again" in third.stderr

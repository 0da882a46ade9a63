"""prb train's checkpoint on disk (issues 48.2, 50.5): written whole or not at all, its files
vouched for by digests checked at load, and an unrelated --out refused.

The kill -9 test runs ``prb train`` in a child process that kills itself at a chosen point of
the save (a wrapper the child installs around the head's ``save_file``: after the new backbone
is on disk, before the head), never by timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.common.atomic import digest
from prb_tasks.testing.personal_pairs import write_users
from prb_tasks.testing.tiny_rm import build_tiny_base_lm
from prb_tasks.train import checkpoint
from prb_tasks.train.command import train
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import TrainError, parse

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = "backbone/model.safetensors"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ckpt")
    build_tiny_base_lm(folder / "bb", "gpt2")
    write_users(folder / "users.jsonl", users=8, pairs=4)
    return folder


def _values(root: Path, out: Path, seed: int = 0) -> dict:
    return {"data": str(root / "users.jsonl"), "architecture": "plain", "backbone": str(root / "bb"),
            "out": str(out), "max_steps": 2, "batch_size": 4, "max_length": 64, "seed": seed,
            "learning_rate": 0.05}


def _train(root: Path, out: Path, seed: int = 0) -> Path:
    return train(parse(_values(root, out, seed), None), progress=False)


@pytest.fixture(scope="module")
def two(root) -> tuple[Path, Path]:
    """Two checkpoints of the same architecture that differ in every weight (other seeds)."""
    return _train(root, root / "a", seed=0), _train(root, root / "b", seed=1)


def test_non_empty_out_that_is_not_a_checkpoint_is_refused_before_training(root, tmp_path):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "chapter1.tex").write_text("precious", encoding="utf-8")
    with pytest.raises(TrainError) as info:
        _train(root, out)
    message = str(info.value)
    assert "\n" not in message and f"--out {out} is a folder with other files in it" in message, message
    assert "give a new or empty folder" in message
    assert sorted(p.name for p in out.iterdir()) == ["chapter1.tex"]
    assert not (tmp_path / ".thesis.partial").exists()  # refused before anything was written
    # An empty folder and a file keep their old answers.
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(TrainError, match="is a file; give a folder"):
        _train(root, tmp_path / "file")


def test_manifest_vouches_for_every_file_and_the_log_sits_beside_it(two):
    a, _ = two
    manifest = json.loads((a / "manifest.json").read_text(encoding="utf-8"))
    files = manifest["files"]
    assert "head.safetensors" in files and WEIGHTS in files and "backbone/config.json" in files
    for name, sha in files.items():
        assert digest(a / name) == sha, name
    assert (a / "train_log.jsonl").is_file()
    assert not (a / "trainer").exists() and not (a.parent / ".a.partial").exists()


@pytest.mark.parametrize("damage", ["mixed backbone", "missing head", "extra file", "no digests"])
def test_a_damaged_checkpoint_is_one_line_at_load(two, tmp_path, damage):
    import shutil

    a, b = two
    folder = tmp_path / "ckpt"
    shutil.copytree(a, folder)
    if damage == "mixed backbone":  # what a kill during the old in-place save left: loaded silently
        shutil.copy(b / WEIGHTS, folder / WEIGHTS)
        expected = f"{folder / WEIGHTS} is not the file written with it"
    elif damage == "missing head":
        (folder / "head.safetensors").unlink()
        expected = f"{folder / 'head.safetensors'} is missing"
    elif damage == "extra file":
        shutil.copy(b / WEIGHTS, folder / "backbone" / "pytorch_model.bin")
        expected = f"{folder / 'backbone' / 'pytorch_model.bin'} was not written with it"
    else:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        del manifest["files"]
        (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        expected = "records no digests of its files (an older prb wrote it); train the model again"
    with pytest.raises(TrainError) as info:
        checkpoint.load(folder, "prb-method (trained)")
    message = str(info.value)
    assert "\n" not in message and expected in message, message
    if damage != "no digests":
        assert message.startswith(f"prb-method (trained): checkpoint '{folder}' is damaged: ")
        assert message.endswith("train the model again (prb train --out writes a whole checkpoint)")
    # prb-method says it when the method is made, before any data loads.
    with pytest.raises(ValueError) as made:
        TrainedMethod(str(folder))
    assert "\n" not in str(made.value) and expected in str(made.value)


def test_an_existing_checkpoint_is_replaced_as_a_whole(root, two, tmp_path):
    import shutil

    a, b = two
    out = tmp_path / "model"
    shutil.copytree(a, out)
    _train(root, out, seed=1)  # ours: replaced, no stray file of the old one left
    assert digest(out / WEIGHTS) == digest(b / WEIGHTS)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == sorted(
        [*manifest["files"], "manifest.json", "train_log.jsonl"])
    checkpoint.load(out, "prb-rm")


_CHILD = """
import os, signal, sys
import safetensors.torch as st
from prb_tasks.train.command import main

real = st.save_file

def killing(*args, **kwargs):  # the head's save: the new backbone is on disk by now
    os.kill(os.getpid(), signal.SIGKILL)

st.save_file = killing
sys.exit(main(sys.argv[1:]))
"""


def test_kill_during_the_save_leaves_the_old_checkpoint_whole(root, two, tmp_path):
    import shutil

    a, b = two
    out = tmp_path / "model"
    shutil.copytree(a, out)
    before = {p.relative_to(out).as_posix(): digest(p) for p in out.rglob("*") if p.is_file()}
    argv = [sys.executable, "-c", _CHILD]
    for key, value in _values(root, out, seed=1).items():
        argv += ["--" + key.replace("_", "-"), str(value)] if key != "data" else [str(value)]
    child = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    after = {p.relative_to(out).as_posix(): digest(p) for p in out.rglob("*") if p.is_file()}
    assert after == before  # the old checkpoint, every byte: not the new backbone beside the old head
    checkpoint.load(out, "prb-method (trained)")
    # The next run clears what the killed one left in the staging folder and replaces the checkpoint.
    assert (tmp_path / ".model.partial").is_dir()
    _train(root, out, seed=1)
    assert digest(out / WEIGHTS) == digest(b / WEIGHTS) and not (tmp_path / ".model.partial").exists()

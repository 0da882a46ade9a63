"""A checkpoint is never evaluated on users it trained on (issue 50.1): ``prb-method``
compares the manifest's seen users and split settings with the evaluation's and refuses
with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.registry import MethodError
from prb_tasks.testing.personal_pairs import write_users
from prb_tasks.testing.tiny_rm import build_tiny_base_lm
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import parse


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("split")
    build_tiny_base_lm(folder / "bb", "gpt2")
    write_users(folder / "users.jsonl", users=12, pairs=10)
    values = {"data": str(folder / "users.jsonl"), "architecture": "plain", "backbone": str(folder / "bb"),
              "out": str(folder / "ckpt"), "max_steps": 2, "max_length": 48}
    train(parse(values, None), progress=False)
    return folder, values


def _evaluation(values: dict, **metadata):
    return load(parse(values, json.dumps({**metadata, "queries": 4}))).few_shot


@pytest.mark.slow
@pytest.mark.training
def test_another_split_seed_is_refused_naming_the_leaked_users(trained):
    folder, values = trained
    manifest = json.loads((folder / "ckpt" / "manifest.json").read_text())
    assert manifest["split"]["split_seed"] == 0 and len(manifest["split"]["data_digest"]) == 16
    data = _evaluation(values, split_seed=3)
    leaked = sorted(set(manifest["users"]) & {u.user_id for u in data.split.unseen})
    assert leaked  # the seed-3 split evaluates users that seed 0 trained on
    with pytest.raises(MethodError) as caught:
        run(TrainedMethod(str(folder / "ckpt")), data)
    line = str(caught.value)
    assert "\n" not in line
    assert (f"checkpoint '{folder / 'ckpt'}' was trained on {len(leaked)} of the "
            f"{len(data.split.unseen)} users this run scores ({', '.join(leaked[:3])}") in line
    assert 'the training\'s --metadata {"split_seed": 0} (this run: {"split_seed": 3})' in line


@pytest.mark.slow
@pytest.mark.training
def test_other_split_settings_and_another_file_are_refused(trained):
    folder, values = trained
    with pytest.raises(MethodError, match=r'--metadata \{"unseen_share": 0.5\} \(this run: \{"unseen_share": 0.25\}'):
        run(TrainedMethod(str(folder / "ckpt")), _evaluation(values, unseen_share=0.25))
    # The same users and split, but the file's texts changed since training.
    other = folder / "changed.jsonl"
    other.write_text((folder / "users.jsonl").read_text().replace("A tale of", "A story of"))
    with pytest.raises(MethodError, match=r"evaluate on the data it was trained on \(.*users.jsonl; this data differs"):
        run(TrainedMethod(str(folder / "ckpt")), _evaluation({**values, "data": str(other)}))


@pytest.mark.slow
@pytest.mark.training
def test_the_training_split_is_accepted(trained):
    folder, values = trained
    outcomes = run(TrainedMethod(str(folder / "ckpt")), _evaluation(values))
    assert outcomes and {o.user_id for o in outcomes}.isdisjoint(
        json.loads((folder / "ckpt" / "manifest.json").read_text())["users"])

"""The mixture's per-user weights have their own learning rate (issue 50.4): on constructed
users (half prefer cats, half dogs), the seen users' trained weights separate the groups.

At the backbone's rate the weights stayed near their random start (0.19-0.32 over four
heads in the issue); each user's logits see only that user's pairs, so, as VPL, PAL and
LoRe do, they get a rate of their own (``--user-learning-rate``, default 0.1).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.testing.personal_pairs import write_users
from prb_tasks.testing.tiny_rm import build_tiny_base_lm
from prb_tasks.train.command import train
from prb_tasks.train.options import parse


def _weights(tmp_path: Path, **extra) -> tuple[np.ndarray, list[str]]:
    import torch
    from safetensors.torch import load_file

    torch.set_num_threads(2)
    if not (tmp_path / "bb").exists():
        build_tiny_base_lm(tmp_path / "bb", "gpt2")
        write_users(tmp_path / "users.jsonl", users=12, pairs=12)
    out = tmp_path / f"mix-{len(extra)}"
    train(parse({"data": str(tmp_path / "users.jsonl"), "architecture": "mixture", "backbone": str(tmp_path / "bb"),
                 "out": str(out), "epochs": 4, "learning_rate": 3e-3, "batch_size": 8, "support_max": 0,
                 "max_length": 32, "heads": 4, **extra}, None), progress=False)
    logits = load_file(str(out / "head.safetensors"))["user_logits.weight"]
    users = json.loads((out / "manifest.json").read_text())["users"]
    return torch.softmax(logits, -1).numpy(), users


@pytest.mark.slow
@pytest.mark.training
def test_mixture_weights_separate_the_groups(tmp_path):
    weights, users = _weights(tmp_path)
    cats = np.array([int(u[1:]) % 2 == 0 for u in users])  # write_users: even users like cats
    assert 0 < cats.sum() < len(users)
    mean_cats, mean_dogs = weights[cats].mean(0), weights[~cats].mean(0)
    # Total-variation distance between the groups' mean weights (0: the same; 1: disjoint heads).
    apart = 0.5 * np.abs(mean_cats - mean_dogs).sum()
    assert apart >= 0.4, (apart, weights.round(2))
    # Every seen user is nearer its own group's mean than the other's.
    own = np.where(cats[:, None], mean_cats, mean_dogs)
    other = np.where(cats[:, None], mean_dogs, mean_cats)
    assert (np.abs(weights - own).sum(1) < np.abs(weights - other).sum(1)).all(), weights.round(2)

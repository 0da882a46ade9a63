"""``prb train`` with every architecture on a PRISM copy in its hub layout: the people's seen
split trains, the checkpoint scores every query of the unseen people (plumbing, not quality:
the copy is 8 constructed people)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.fewshot.evaluate import run
from prb_tasks.testing.tiny_rm import build_tiny_base_lm
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import parse
from tests.prism_fixture import many_rows, write_prism


@pytest.mark.slow
@pytest.mark.training
def test_every_architecture_trains_on_prism(tmp_path: Path) -> None:
    import torch

    torch.set_num_threads(2)
    build_tiny_base_lm(tmp_path / "bb", "gpt2")
    copy = write_prism(tmp_path / "prism", *many_rows(8, 8))
    for arch in ("plain", "context", "latent", "mixture"):
        options = parse({"data": str(copy), "family": "prism", "architecture": arch, "backbone": str(tmp_path / "bb"),
                         "out": str(tmp_path / arch), "epochs": 1, "batch_size": 8, "support_max": 2,
                         "max_length": 96}, '{"queries": 2}')
        train(options, progress=False)
        few_shot = load(options).few_shot
        assert few_shot is not None and few_shot.source == "prism"
        expected = sum(len(u.queries) for k in few_shot.split.ks for u in few_shot.split.evaluated(k))
        outcomes = run(TrainedMethod(options.out), few_shot)
        assert len(outcomes) == expected > 0, arch
        # No unseen person's pair was trained on.
        assert not {o.user_id for o in outcomes} & set(few_shot.split.seen), arch

"""prb train --seeds N: N runs that differ only by the seed, in OUT/seed-<n>, every one holding out
the same rows (so their evaluations differ only by the training run, and prb compare folds them)."""

from __future__ import annotations

import argparse

import pytest

from prb_tasks.train import command
from prb_tasks.train.data import load
from prb_tasks.train.options import parse


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(argv)


def test_seeds_trains_one_run_per_seed_in_its_own_folder(tmp_path, monkeypatch, capsys):
    trained = []
    monkeypatch.setattr(command, "train", lambda options, progress=True: trained.append(options))
    code = command.run(_args(["sample", "--architecture", "plain", "--backbone", "bb", "--out", str(tmp_path / "r"),
                              "--seed", "3", "--seeds", "3"]))
    assert code == 0
    assert [(o.seed, o.out, o.holdout_seed) for o in trained] == [
        (3 + n, str(tmp_path / "r" / f"seed-{3 + n}"), 3) for n in range(3)]
    # Apart from the seed and the folder, the runs are told the same.
    assert {o.model_dump_json(exclude={"seed", "out"}) for o in trained} == {
        trained[0].model_dump_json(exclude={"seed", "out"})}
    assert "3 checkpoints" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "two"])
def test_a_wrong_seeds_is_one_line(tmp_path, value, capsys):
    code = command.run(_args(["sample", "--architecture", "plain", "--backbone", "bb", "--out", str(tmp_path / "r"),
                              "--seeds", value]))
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and f"--seeds {value}" in err


def test_the_seeds_hold_out_the_same_rows():
    base = {"data": "sample", "architecture": "plain", "backbone": "bb", "out": "o"}
    first = load(parse({**base, "seed": 0}, None)).heldout
    # Without a holdout seed a different --seed holds out other rows; --seeds pins the first seed's.
    assert load(parse({**base, "seed": 1}, None)).heldout != first
    assert load(parse({**base, "seed": 1, "holdout_seed": 0}, None)).heldout == first
    runs = command.seed_runs(parse({**base, "seed": 0}, None), 2)
    assert [load(o).heldout for o in runs] == [first, first]

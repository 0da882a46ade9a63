"""``prb train`` says a wrong data path before its heavy imports (issue 49, item 6)."""

from __future__ import annotations

import sys

import pytest

from prb_tasks.train.command import train
from prb_tasks.train.options import TrainError, parse


def test_a_missing_data_file_is_said_before_torch_is_imported(tmp_path, monkeypatch):
    # torch that cannot be imported: the old order said "needs torch and transformers" instead,
    # and with torch installed spent tens of seconds importing it before saying the file is missing.
    monkeypatch.setitem(sys.modules, "torch", None)
    options = parse({"data": str(tmp_path / "nowhere.jsonl"), "architecture": "plain", "backbone": "org/backbone",
                     "out": str(tmp_path / "out")}, None)
    with pytest.raises(TrainError, match=r"^prb train: '.*nowhere\.jsonl' does not exist; give "):
        train(options, progress=False)

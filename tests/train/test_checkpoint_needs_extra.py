"""`method=trained` (or prb-rm on a checkpoint) without the train extra names the extra (issue 63
item 4: it was `ModuleNotFoundError: safetensors`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from prb_tasks.train import checkpoint
from prb_tasks.train.options import TrainError


@pytest.mark.parametrize("module", ["safetensors.torch", "transformers"])
def test_a_missing_package_names_the_train_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 module: str) -> None:
    (tmp_path / checkpoint.MANIFEST).write_text(json.dumps({"format": checkpoint.FORMAT, "architecture": "plain"}),
                                                encoding="utf-8")
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing it raises ImportError
    with pytest.raises(TrainError) as info:
        checkpoint.load(tmp_path, "prb-method (trained)")
    line = str(info.value)
    assert line.startswith(f"prb-method (trained): a checkpoint of prb train needs the 'train' extra "
                           f"(missing: {module}); install it: pip install ")
    assert line.endswith("[train]'") and "\n" not in line

"""`pretrained=` a folder that is not there is answered at once (issue 63 item 4): it waited ~20 s
for the hub and answered with a connection error."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.common.hub_reach import missing_folder
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.options import RMOptions


def test_names_meant_as_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert missing_folder("runs/nope") == "no folder runs/nope (runs holds no nope)"
    assert missing_folder("./rm") == "no folder ./rm"
    assert missing_folder(f"{tmp_path}/a/b/c") == f"no folder {tmp_path}/a/b/c ({tmp_path} holds no a/b/c)"
    assert missing_folder("x/y/z") == "no folder x/y/z"
    assert missing_folder("runs") is None  # it exists
    assert missing_folder("OpenAssistant/reward-model-deberta-v3-large-v2") is None  # a hub id
    assert missing_folder("gpt2") is None


def test_the_scorer_says_it_before_asking_the_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prb_tasks.rm.scorers import hf

    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()

    def no_hub(*args: object, **kwargs: object) -> None:
        raise AssertionError("the hub was asked")

    monkeypatch.setattr(hf, "hub_model_access", no_hub)
    monkeypatch.setattr(hf, "_import_stack", no_hub)
    with pytest.raises(RMError) as info:
        hf.HFScorer(RMOptions(pretrained="runs/nope"))
    assert str(info.value) == ("prb-rm: pretrained=runs/nope: no folder runs/nope (runs holds no nope); give the "
                               "folder of a saved model or a Hugging Face model id (ORG/NAME)")

"""``--backbone`` problems are one whole line before any data loads (issue 50.6)."""

from __future__ import annotations

import pytest

from prb_tasks.train.command import FLAGS, run
from prb_tasks.train.options import TrainError, parse


def _train(tmp_path, backbone: str) -> None:
    from prb_tasks.train.command import train

    # The bundled preference file: the data path is checked first (before the heavy imports), the
    # backbone next, before any data is read.
    train(parse({"data": "example", "architecture": "plain", "backbone": backbone,
                 "out": str(tmp_path / "out")}, None), progress=False)


def test_a_gguf_file_says_how_to_convert_it(tmp_path):
    gguf = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(TrainError) as caught:
        _train(tmp_path, str(gguf))
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"prb train: --backbone {gguf} is a GGUF file")
    # transformers 5 saves a GGUF model only when it was loaded dequantized (seen: the plain
    # from_pretrained(gguf_file=).save_pretrained() of SmolLM2-135M-Instruct.Q4_1.gguf raised ValueError).
    assert f"'SmolLM2-135M-Instruct.Q4_1.gguf', '{tmp_path / 'SmolLM2-135M-Instruct.Q4_1'}'; " in line
    assert "from_pretrained(d, gguf_file=f, **q).save_pretrained(o)" in line and "GgufConfig(dequantize=True)" in line
    assert line.endswith(f"give --backbone {tmp_path / 'SmolLM2-135M-Instruct.Q4_1'}")


def test_offline_missing_backbone_is_whole_and_names_the_id(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    args = type("Args", (), {"data": "example", "metadata": None})()
    for name in FLAGS:
        setattr(args, name, None)
    args.architecture, args.backbone, args.out = "plain", "someorg/some-model", str(tmp_path / "o")
    assert run(args) == 2
    err = capsys.readouterr().err
    assert err == ("prb train: --backbone someorg/some-model is not in the local Hugging Face cache and "
                   "HF_HUB_OFFLINE=1 forbids downloading it; run `hf download someorg/some-model` "
                   "on a connected machine (or unset HF_HUB_OFFLINE), or give a model folder\n")

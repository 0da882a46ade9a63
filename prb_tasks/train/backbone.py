"""Is ``--backbone`` something ``prb train`` can load? Asked before any data is rendered or a
model loads, each answer one line that says what to do."""

from __future__ import annotations

from pathlib import Path

from prb_tasks.train.options import TrainError


def _gguf_line(backbone: str) -> str:
    """How to turn a GGUF file into a folder ``AutoModel`` loads (transformers reads GGUF with ``gguf``)."""
    path = Path(backbone).expanduser()
    out = path.with_suffix("")
    # transformers 5 keeps GGUF weights quantized (and refuses to save them) unless asked to
    # dequantize; transformers 4 has no GgufConfig and always dequantized.
    code = (f"import transformers as t; d, f, o = '{path.parent}', '{path.name}', '{out}'; "
            "q = {'quantization_config': t.GgufConfig(dequantize=True)} if hasattr(t, 'GgufConfig') else {}; "
            "t.AutoModel.from_pretrained(d, gguf_file=f, **q).save_pretrained(o); "
            "t.AutoTokenizer.from_pretrained(d, gguf_file=f).save_pretrained(o)")
    return (f"prb train: --backbone {backbone} is a GGUF file (quantized, for llama.cpp), which prb train cannot "
            f"fine-tune; give the Hugging Face model it was made from, or convert it once (pip install gguf; "
            f"python -c \"{code}\") and give --backbone {out}")


def check_backbone(backbone: str) -> None:
    """One line when ``backbone`` cannot be loaded: a missing path, a GGUF file, a hub model that is
    not cached while the hub is switched off (``HF_HUB_OFFLINE``) or out of reach.

    Args:
        backbone: ``--backbone`` as given (a Hugging Face model id, a folder or a file).
    """
    from prb_tasks.common.hub_reach import hub_model_access, offline_mode

    path = Path(backbone).expanduser()
    if backbone.lower().endswith(".gguf"):
        raise TrainError(_gguf_line(backbone))
    if backbone.startswith(("/", ".", "~")) and not path.exists():
        raise TrainError(f"prb train: --backbone {backbone} does not exist; give a Hugging Face model id "
                         "or a model folder")
    if path.exists():
        return
    if offline_mode():
        from huggingface_hub import try_to_load_from_cache

        try:
            cached = isinstance(try_to_load_from_cache(backbone, "config.json"), str)
        except Exception:  # noqa: BLE001 - a malformed id: from_pretrained names it
            return
        if not cached:
            raise TrainError(f"prb train: --backbone {backbone} is not in the local Hugging Face cache and "
                             f"HF_HUB_OFFLINE=1 forbids downloading it; run `hf download {backbone}` "
                             "on a connected machine (or unset HF_HUB_OFFLINE), or give a model folder")
        return
    _, problem = hub_model_access(backbone)
    if problem:
        raise TrainError(f"prb train: --backbone {backbone}: {problem}; run `hf download {backbone}` "
                         "once on a connected machine, or give a model folder")


def load_problem(exc: BaseException) -> str:
    """The first sentence of a ``from_pretrained`` error, whole (never cut mid-word or mid-address)."""
    text = " ".join(str(exc).split())
    first = text.split(". ")[0].rstrip(".")
    return first if len(first) <= 300 else first[:first.rfind(" ", 0, 300)] + " ..."

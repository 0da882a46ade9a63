"""Where PersonalLLM rows come from: a local folder or the HF hub.

Precedence: ``--metadata '{"data_dir": ...}'``, then ``PRB_PERSONALLLM_DIR``, then
the hub (``namkoong-lab/PersonalLLM``, split ``test``).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from prb_tasks.data.hub import load_from_hub, require_hub
from prb_tasks.data.local import local_folder
from prb_tasks.data.personalllm.constants import DATA_FOLDER, HF_REPO, HF_SPLIT
from prb_tasks.data.personalllm.reader import read_split, usable, validate_rows
from prb_tasks.data.personalllm.schema import PromptRow
from prb_tasks.data.rawfiles import folder_stamp

ENV_VAR = "PRB_PERSONALLLM_DIR"


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The local folder to read, or None for the HF hub.

    Args:
        data_dir: value from ``--metadata``; None falls back to ``PRB_PERSONALLLM_DIR``.
    """
    return local_folder(data_dir, ENV_VAR)


def load_prompts(data_dir: str | os.PathLike[str] | None = None, split: str = HF_SPLIT) -> list[PromptRow]:
    """Validated prompt rows with all their rewards, in dataset order.

    Args:
        data_dir: local copy (see :func:`resolve_data_dir`).
        split: ``test`` (default) or ``train`` (read only by the authors' public-script preset).
    """
    folder = resolve_data_dir(data_dir)
    if folder is None:
        return _from_hub(split)
    return _from_folder(folder, split, _stamp(folder))


def source_tag(data_dir: str | os.PathLike[str] | None) -> str:
    """A short name of the source, used in document keys: the folder, or ``hub``."""
    folder = resolve_data_dir(data_dir)
    return "hub" if folder is None else str(folder)


def _stamp(folder: Path) -> tuple[float, ...]:
    return folder_stamp(folder / DATA_FOLDER)


@lru_cache(maxsize=4)
def _from_folder(folder: Path, split: str, _stamp: tuple[float, ...]) -> list[PromptRow]:
    # Every PersonalLLM task of a run reads the same files; the stamp keeps the cache
    # honest if a file is rewritten in between.
    origin = str(folder) if split == HF_SPLIT else f"{folder}, {split} split"
    return usable(read_split(folder, split), origin)


_OFFLINE_ADVICE = (
    "on an offline machine run `prb data download DIR --family personalllm` elsewhere and pass "
    f"--metadata '{{\"data_dir\": \"DIR\"}}' or set {ENV_VAR}"
)


@lru_cache(maxsize=2)
def _from_hub(split: str = HF_SPLIT) -> list[PromptRow]:
    require_hub(f"{HF_REPO} ({split})", _OFFLINE_ADVICE)
    ds = load_from_hub(HF_REPO, split, _OFFLINE_ADVICE, split=split)
    return usable(validate_rows(ds, f"{HF_REPO}:{split}"), HF_REPO if split == HF_SPLIT else f"{HF_REPO}:{split}")

"""verl's training data: one parquet row per question, as the authors' ``PPO/prepare_data.py`` makes it.

A row holds ``data_source``, the policy's chat (``prompt``: the system message, then their
``sample.txt`` filled with the question and the top-k posts), an empty ground truth (the reward
is a model's) and ``extra_info`` with the split, the row's index, the bare question (``query``)
and the posts as one text (``profile``), which the reward function hands to the reward model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prb_tasks.rl.prompts import RLPrompt


def verl_row(prompt: RLPrompt, index: int, data_source: str) -> dict[str, Any]:
    """One question as a row of verl's training data.

    Args:
        prompt: the question as the policy and the reward model see it (its ``question`` and
            ``profile`` fill ``extra_info``).
        index: the row's position in the file (their ``extra_info.index``).
        data_source: where the rows came from (their ``local:<jsonl path>``); verl picks the
            reward function by it when none is given, and passes it to ours.
    """
    return {
        "data_source": data_source,
        "prompt": [{"role": role, "content": text} for role, text in prompt.messages],
        "reward_model": {"ground_truth": ""},
        "extra_info": {"split": "train", "index": index, "query": prompt.question, "profile": prompt.profile},
    }


def write_parquet(prompts: list[RLPrompt], path: Path, data_source: str) -> Path:
    """Write every prompt's row to ``path`` (parquet, as ``datasets`` writes it); the path.

    Args:
        prompts: the training questions, in order.
        path: the parquet file (its folder is created; written to a temporary name first).
        data_source: every row's ``data_source``.
    """
    import datasets

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # a bar for a file written in a second is noise in prb rl's output
    try:
        datasets.Dataset.from_list([verl_row(p, i, data_source) for i, p in enumerate(prompts)]).to_parquet(str(tmp))
    finally:
        if shown:
            datasets.enable_progress_bars()
    tmp.replace(path)
    return path

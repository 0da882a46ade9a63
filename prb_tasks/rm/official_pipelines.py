"""How each benchmark's authors feed a scalar reward model, for ``protocol=official``.

``protocol=official`` reproduces the script of the benchmark being run: Personalized
RewardBench's ``evaluation/pointwise.py`` (:mod:`prb_tasks.rm.scorers.hf_official`), or one
of the two below (:mod:`prb_tasks.rm.scorers.hf_authors`). Facts read in their code, not
their code:

- RewardBench 2, allenai/reward-bench @05a9005 ``scripts/run_v2.py`` with its default model
  config (``default_v2``): the tokenizer's chat template rendered to text, then tokenized
  with the tokenizer's special tokens (``RewardBenchPipeline``), cut at ``--max_length``
  2,048 tokens on the tokenizer's own side (right for nearly every tokenizer), padded on
  its own side; ``--torch_dtype`` float16 by default; not quantized; batches of 64.
- RM-Bench, THU-KEG/RM-Bench @73c52d7 ``scripts/run_rm.py`` (its ``rewardbench`` package is
  allenai's at 1266638, config ``default``): the same rendering and pipeline, but the
  tokenizer cuts on the **left**; float16; loaded in 8 bits (bitsandbytes) unless the model
  name says Llama-3 (``llama-3``, ``Llama3``, ``Llama-3``, ``LLaMA3``, ``llama3``) or the
  dtype is bfloat16; batches of 64.

Both pipelines mask the first of two BOS tokens at a sequence's start (a chat template that
writes its own BOS, tokenized with the tokenizer's BOS again) in the attention mask, and
pad with the EOS id when the tokenizer has no pad token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from prb_tasks.rm.errors import RMError

#: The model-name fragments for which RM-Bench's run_rm.py turns 8-bit loading off.
LLAMA3_NAMES = ("llama-3", "Llama3", "Llama-3", "LLaMA3", "llama3")


@dataclass(frozen=True)
class AuthorsInput:
    """One benchmark's scalar-RM input pipeline, as its authors' script runs it.

    Attributes:
        benchmark: the benchmark's name, for messages.
        task_prefix: the prefix of its prb task names.
        script: where the facts come from (repository, commit, file).
        max_length: the longest input in tokens (their ``--max_length`` default).
        truncation_side: ``left``, or None for the tokenizer's own side.
        dtype: their ``--torch_dtype`` default.
        quantized: whether their default config loads the model in 8 bits.
        batch_size: their ``--batch_size`` default.
    """

    benchmark: str
    task_prefix: str
    script: str
    max_length: int
    truncation_side: Optional[str]
    dtype: str
    quantized: bool
    batch_size: int

    def loads_in_8bit(self, model: str, dtype: str) -> bool:
        """Whether their script would load ``model`` in 8 bits.

        Args:
            model: the ``pretrained`` id or folder, as their ``--model``.
            dtype: the dtype the run uses (bfloat16 turns quantization off in their script).
        """
        if not self.quantized or dtype == "bfloat16":
            return False
        return not any(name in model for name in LLAMA3_NAMES)


    def fixed(self) -> dict[str, tuple[tuple[object, ...], str]]:
        """What ``protocol=official`` fixes for this benchmark: key -> (values accepted, what it does)."""
        return {
            "dtype": (("float16", "bfloat16", "float32", "float64"),
                      "takes float16 (their default), bfloat16, float32 or float64, as their --torch_dtype"),
            "max_length": ((self.max_length,), f"cuts inputs at {self.max_length} tokens"),
            "input_format": (("chat", "auto"), "renders the tokenizer's chat template"),
            "head": (("auto",), "reads the single logit"),
            "truncation_side": ((), "cuts on the left" if self.truncation_side == "left"
                                else "keeps the tokenizer's own truncation side"),
            "padding_side": ((), "keeps the tokenizer's own padding side"),
        }


PIPELINES: dict[str, AuthorsInput] = {
    "rewardbench2": AuthorsInput("RewardBench 2", "rewardbench2", "allenai/reward-bench @05a9005 scripts/run_v2.py",
                                 max_length=2048, truncation_side=None, dtype="float16", quantized=False,
                                 batch_size=64),
    "rmbench": AuthorsInput("RM-Bench", "rmbench", "THU-KEG/RM-Bench @73c52d7 scripts/run_rm.py",
                            max_length=2048, truncation_side="left", dtype="float16", quantized=True,
                            batch_size=64),
}


def pipeline_of(task: str | None) -> AuthorsInput | None:
    """The authors' pipeline a task's responses go through (None: Personalized RewardBench's).

    Args:
        task: a task or group name.
    """
    for prefix, pipeline in PIPELINES.items():
        if task and task.startswith(prefix):
            return pipeline
    return None


def pipeline_for(tasks: Sequence[str]) -> AuthorsInput | None:
    """The one authors' pipeline a ``protocol=official`` run uses; refuses a run mixing benchmarks.

    Args:
        tasks: the run's ``--tasks`` (names and groups).
    """
    found = {pipeline_of(task) for task in tasks}
    if len(found) > 1:
        names = sorted(p.benchmark if p else "Personalized RewardBench" for p in found)
        raise RMError(f"prb-rm: protocol=official feeds each benchmark's model as its own authors' script does, and "
                      f"{' and '.join(names)} load and cut inputs differently; run each benchmark in its own command")
    return next(iter(found)) if found else None

"""``protocol=official`` on RewardBench 2 and RM-Bench: the model fed as each authors' script feeds it.

The pipeline's facts are in :mod:`prb_tasks.rm.official_pipelines`. What this scorer does
with them: the tokenizer's chat template rendered to text and tokenized with its special
tokens; cut at 2,048 tokens (right, the tokenizer's own side, for RewardBench 2; left for
RM-Bench); padded on the tokenizer's side with its pad token, or its EOS when it has none;
float16 weights; the first of two BOS tokens at a sequence's start masked out; the single
logit in the model's dtype; batches of 64 in dataset order. RM-Bench's 8-bit loading needs
bitsandbytes and CUDA; without them the model is scored in float16 and a line says so.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.official_pipelines import AuthorsInput, pipeline_of
from prb_tasks.rm.options import RMOptions
from prb_tasks.rm.scorers.base import Report
from prb_tasks.rm.scorers.hf_official import OfficialHFScorer


def bitsandbytes_missing(device: str) -> str | None:
    """Why 8-bit loading cannot run here (None: it can).

    Args:
        device: the device the model goes to.
    """
    import importlib.util

    if importlib.util.find_spec("bitsandbytes") is None:
        return "bitsandbytes is not installed"
    if not device.startswith("cuda"):
        return f"no CUDA device: this run scores on {device}"
    return None


class AuthorsHFScorer(OfficialHFScorer):
    """Scores responses exactly as RewardBench 2's or RM-Bench's authors' script does.

    Args:
        options: validated model arguments with ``protocol=official``.
        pipeline: the benchmark's pipeline (:data:`~prb_tasks.rm.official_pipelines.PIPELINES`).
        device_from_harness: ``options.device`` is lm-eval's ``--device`` default.
    """

    def __init__(self, options: RMOptions, pipeline: AuthorsInput, device_from_harness: bool = False) -> None:
        self.pipeline = pipeline
        self.name = f"hf, {pipeline.benchmark} authors' protocol"
        if "max_length" in options.model_fields_set and options.max_length != pipeline.max_length:
            raise RMError(f"prb-rm: protocol=official cuts {pipeline.benchmark} inputs at {pipeline.max_length} "
                          f"tokens, as {pipeline.script} does; drop max_length= or use protocol=clean")
        self.in_8bit = False
        super().__init__(options, device_from_harness=device_from_harness)
        self.batch_size = options.effective_batch_size if options.batch_size not in (None, "auto") \
            else pipeline.batch_size

    @property
    def _their_script(self) -> str:
        """``RM-Bench's run_rm.py``: the script, short enough for a line of output."""
        return f"{self.pipeline.benchmark}'s {self.pipeline.script.rsplit('/', 1)[-1]}"

    # -- setup

    def _dtype_name(self, options: RMOptions) -> str:
        # Their --torch_dtype: float16 unless given (bfloat16 is the one value RMOptions lets through).
        return options.dtype if "dtype" in options.model_fields_set else self.pipeline.dtype

    def _load_kwargs(self, transformers: Any) -> dict[str, Any]:
        dtype = str(self.dtype).replace("torch.", "")
        if not self.pipeline.loads_in_8bit(self.options.pretrained or "", dtype):
            return {}
        missing = bitsandbytes_missing(self.device)
        if missing:
            line = f"{self._their_script} loads this model in 8 bits; not reproduced ({missing}): {dtype} here"
            # Said once, at load time, before the scores it concerns.
            print(f"prb-rm: {line}", file=sys.stderr, flush=True)
            return {}
        self.in_8bit = True
        return {"quantization_config": transformers.BitsAndBytesConfig(load_in_8bit=True),
                "device_map": {"": self.device}}

    def _configure(self, options: RMOptions) -> None:
        super()._configure(options)
        if self.num_labels != 1:
            raise RMError(f"prb-rm: protocol=official reads one logit per response, as {self.pipeline.script} "
                          f"does, but {options.pretrained!r} has {self.num_labels} labels; use protocol=clean")
        self.max_length = self.pipeline.max_length
        if self.pipeline.truncation_side is not None:
            self.tokenizer.truncation_side = self.pipeline.truncation_side

    def _identity_extra(self) -> tuple[tuple[str, str], ...]:
        return (("protocol", f"official-{self.pipeline.task_prefix}"), ("8bit", str(self.in_8bit)),
                ("truncation_side", str(self.tokenizer.truncation_side)),
                ("padding_side", str(self.tokenizer.padding_side)))

    def _setup_padding(self) -> int | None:
        # Their order: a tokenizer without a pad token pads with its EOS, written to the model's
        # config too; otherwise the config takes the tokenizer's pad token only if it has none.
        tokenizer, config = self.tokenizer, self.model.config
        if tokenizer.pad_token_id is None:
            if tokenizer.eos_token_id is None:
                raise RMError(f"prb-rm: the tokenizer of {self.options.pretrained!r} has neither a pad nor an EOS "
                              f"token, and {self.pipeline.script} pads with one of them; use protocol=clean")
            tokenizer.pad_token = tokenizer.eos_token
            config.pad_token_id = tokenizer.eos_token_id
        elif config.pad_token_id is None:
            config.pad_token_id = tokenizer.pad_token_id
        return int(config.pad_token_id)

    # -- scoring

    def _check_tasks(self, items: Sequence[RMInput]) -> None:
        for item in items:
            if item.group is not None and pipeline_of(item.group) is not self.pipeline:
                raise RMError(f"prb-rm: this protocol=official model feeds {self.pipeline.benchmark} as "
                              f"{self.pipeline.script} does, not task {item.group}; run each benchmark in its "
                              "own command")

    def encode(self, texts: list[str]) -> dict[str, Any]:
        """The batch the model is called with, as their ``RewardBenchPipeline`` builds it.

        Args:
            texts: chat-template texts.
        """
        torch = self._torch
        inputs = dict(self.tokenizer(texts, truncation=True, max_length=self.max_length, padding=True,
                                     return_tensors="pt"))
        if self.tokenizer.bos_token:
            ids, mask = inputs["input_ids"], inputs["attention_mask"]
            rows = torch.arange(ids.size(0))
            starts = mask.argmax(dim=1)
            second = torch.clamp(starts + 1, max=ids.size(1) - 1)
            double = (ids[rows, starts] == self.tokenizer.bos_token_id) & (ids[rows, second] ==
                                                                            self.tokenizer.bos_token_id)
            # The first of two BOS at a sequence's start is kept but not attended to.
            mask[rows[double], starts[double]] = 0
        return {k: v.to(self.device) for k, v in inputs.items()}

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        self._check_tasks(items)
        rewards: list[float] = []
        for start in range(0, len(items), self.batch_size):
            texts = [self.formatted(item) for item in items[start:start + self.batch_size]]
            full = self.tokenizer(texts, truncation=False, verbose=False)["input_ids"]
            self.truncated += sum(len(ids) > self.max_length for ids in full)
            logits = self._logits(self.encode(texts))
            # Their .float() of the logits in the model's dtype.
            scores = [float(v) for v in logits[:, 0].float().cpu().tolist()]
            rewards += scores
            self.scored += len(texts)
            if report:
                report(range(start, start + len(texts)), scores)
        return rewards

    def notes(self) -> list[str]:
        if not self.scored:
            return []
        weights = "8-bit weights" if self.in_8bit else str(self.dtype).replace("torch.", "")
        # Each line fits 120 columns behind "prb-rm: ".
        lines = [f"fed as {self.pipeline.script} feeds it:",
                 f"  scored on {self.device} in {weights}, batches of {self.batch_size} in dataset order, "
                 "the single logit",
                 "  chat template text tokenized with the tokenizer's special tokens (a doubled BOS masked)"]
        lines += list(dict.fromkeys(self._notes))
        lines.append(f"{self.truncated} of {self.scored} inputs were longer than {self.max_length} tokens and were "
                     f"truncated ({self.tokenizer.truncation_side} side)")
        return lines

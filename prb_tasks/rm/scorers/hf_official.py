"""``protocol=official``: the authors' scalar pipeline, for reproducing the paper's numbers.

Restated from the authors' ``evaluation/pointwise.py`` (facts, not their code):

- the two-turn chat is rendered to *text* with the tokenizer's chat template and then
  tokenized with the tokenizer's default special tokens, so a template that writes its
  own BOS (Llama-3, Gemma) gets a second one in front;
- weights in bfloat16; the score is the single logit, or for multi-class heads the
  softmax probability of the last class, both taken in the model's dtype (in bfloat16
  the softmax rounds to 1.0 above ~0.998, which turns close pairs into ties);
- at most 8,192 tokens, cut on the tokenizer's own side (right for nearly every
  tokenizer); padding on the tokenizer's own side, no position ids;
- batches of 8 in dataset order (chosen, then rejected, row by row), one subset per run.

Where their script would stop (a tokenizer without a pad token) we pad with the
EOS id as in the clean protocol and say so. Our default (``protocol=clean``, the
parent class) differs on purpose: one BOS, fp32 softmax, left truncation, batching by
length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prb_tasks.rm.errors import RMError
from prb_tasks.rm.heads import resolve_head
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.options import OFFICIAL_FIXED, RMOptions
from prb_tasks.rm.scorers.base import Report
from prb_tasks.rm.scorers.hf import HFScorer

OFFICIAL_MAX_LENGTH = OFFICIAL_FIXED["max_length"][0][0]


class OfficialHFScorer(HFScorer):
    """Scores responses exactly through the authors' scalar pipeline.

    Args:
        options: validated model arguments with ``protocol=official``.
        device_from_harness: ``options.device`` is lm-eval's ``--device`` default.
    """

    name = "hf, official protocol"

    def _dtype_name(self, options: RMOptions) -> str:
        return OFFICIAL_FIXED["dtype"][0][0]

    def _configure(self, options: RMOptions) -> None:
        if not getattr(self.tokenizer, "chat_template", None):
            raise RMError(f"prb-rm: protocol=official renders the tokenizer's chat template, as the authors' "
                          f"script does, but the tokenizer of {options.pretrained!r} has none; use protocol=clean")
        self.format = "chat"
        self.head = resolve_head("auto", self.num_labels)
        self.max_length = OFFICIAL_MAX_LENGTH

    def _identity_extra(self) -> tuple[tuple[str, str], ...]:
        return (("protocol", "official"), ("format", self.format),
                ("truncation_side", str(self.tokenizer.truncation_side)),
                ("padding_side", str(self.tokenizer.padding_side)))

    def _setup_padding(self) -> int | None:
        pad = super()._setup_padding()
        if pad is not None and self.tokenizer.pad_token_id is None:
            # The tokenizer pads the batch itself here, as in the authors' script.
            self.tokenizer.pad_token = self.tokenizer.convert_ids_to_tokens(pad)
        return pad

    def fixed_batches(self, items: Sequence[RMInput]) -> list[list[int]]:
        """Runs of ``batch_size`` consecutive items, restarted at each new task (subset)."""
        batches: list[list[int]] = []
        for n, item in enumerate(items):
            if batches and len(batches[-1]) < self.batch_size and items[batches[-1][0]].group == item.group:
                batches[-1].append(n)
            else:
                batches.append([n])
        return batches

    def token_ids(self, item: RMInput) -> list[int]:
        encoded = self.tokenizer(self.formatted(item), truncation=True, max_length=self.max_length)
        return list(encoded["input_ids"])

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        rewards: list[float] = []
        for start in range(0, len(items), self.batch_size):
            texts = [self.formatted(item) for item in items[start:start + self.batch_size]]
            full = self.tokenizer(texts, truncation=False, verbose=False)["input_ids"]
            self.truncated += sum(len(ids) > self.max_length for ids in full)
            encoded = self.tokenizer(texts, return_tensors="pt", padding=True, truncation=True,
                                     max_length=self.max_length)
            logits = self._logits({k: v.to(self.device) for k, v in encoded.items()})
            scores = [self._score_row(logits[j]) for j in range(len(texts))]
            rewards += scores
            self.scored += len(texts)
            if report:
                report(range(start, start + len(texts)), scores)
        return rewards

    def _logits(self, encoded: dict) -> Any:
        """The model's logits for one encoded batch; out of GPU memory is one line.

        Args:
            encoded: the batch's tensors, on the model's device.
        """
        torch = self._torch
        try:
            with torch.inference_mode():
                output = self.model(**encoded)
        except torch.cuda.OutOfMemoryError:
            raise RMError(f"prb-rm: out of GPU memory with batches of {self.batch_size}; pass a smaller "
                          "batch_size= (the authors' script takes a batch size too)") from None
        return output.logits if hasattr(output, "logits") else output[0]

    def _score_row(self, row) -> float:  # a torch tensor in the model's dtype
        if row.shape[-1] == 1:
            return float(row[0].item())
        return float(self._torch.softmax(row, dim=-1)[-1].item())

    def notes(self) -> list[str]:
        if not self.scored:
            return []
        lines = [f"official protocol: scored on {self.device} in {str(self.dtype).replace('torch.', '')}, "
                 f"batches of {self.batch_size} in dataset order, chat template text tokenized with the "
                 f"tokenizer's special tokens, head {self.head} (taken in the model's dtype)"]
        lines += list(dict.fromkeys(self._notes))
        lines.append(f"{self.truncated} of {self.scored} inputs were longer than {self.max_length} tokens and were "
                     f"truncated ({self.tokenizer.truncation_side} side)")
        return lines

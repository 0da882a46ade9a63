"""Hugging Face ``AutoModelForSequenceClassification`` reward models.

torch and transformers are imported only when this scorer is built.

How a batch is scored, and why scores do not depend on batching:
- Each input is tokenized alone; batches group inputs of similar length
  (longest first) and results are returned in the original order.
- Batches are padded with the id in ``model.config.pad_token_id``: decoder heads
  (GPT-2, Llama, ...) read the score at the rightmost token that is not that id,
  so the pad id we pad with must be the one the head looks for. A tokenizer
  without a pad token pads with its EOS (or UNK) id, which is also written to the
  config; with none of them, inputs are scored one at a time.
- With left padding, position ids are computed from the attention mask, because
  models with absolute positions (GPT-2) would otherwise see shifted positions.
"""

from __future__ import annotations

import hashlib
import inspect
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prb_tasks.common.devices import resolve_device, resolve_dtype
from prb_tasks.common.hub_reach import hub_model_access, missing_folder
from prb_tasks.common.install_hint import pip_install
from prb_tasks.common.plain_logs import plain_transformers_logs
from prb_tasks.rm.batching import sorted_batches
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.formatting import InputFormat, render, resolve_format
from prb_tasks.rm.heads import resolve_head, reward
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.options import RMOptions
from prb_tasks.rm.score_cache import ScorerIdentity
from prb_tasks.rm.scorers.base import Report, Scorer

# Fallback token limit for models that state none (and the cap for models that
# claim a huge one): benchmark inputs are a question plus ~100 words.
_DEFAULT_MAX_LENGTH = 4096

#: Inputs tokenized at once (see ``HFScorer._features``).
ENCODE_CHUNK = 256


def _import_stack() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise RMError(f"prb-rm: scorer=hf needs the 'rm' extra ({pip_install('rm')}); "
                      f"missing: {exc.name}") from None
    return torch, transformers


def _folder_fingerprint(folder: Path) -> str:
    # A local folder has no commit hash; its file names, sizes and modification
    # times change whenever the weights or tokenizer are rewritten.
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return "local:" + digest.hexdigest()[:16]


def _token_limit(tokenizer: Any, config: Any) -> int:
    limits = [int(tokenizer.model_max_length)] if 0 < (tokenizer.model_max_length or 0) < 1_000_000 else []
    for name in ("max_position_embeddings", "n_positions"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            limits.append(value)
    return min(limits + [_DEFAULT_MAX_LENGTH])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class HFScorer(Scorer):
    """Scores ``[user: prompt, assistant: response]`` with a local sequence classifier.

    Args:
        options: validated model arguments (``pretrained``, ``revision``, ``dtype``,
            ``device``, ``trust_remote_code``, ``head``, ``input_format``,
            ``max_length``, ``truncation_side``, ``padding_side``, ``batch_size``).
        device_from_harness: ``options.device`` came from lm-eval's ``--device``
            default rather than from the user (see :func:`resolve_device`).
    """

    name = "hf"

    def __init__(self, options: RMOptions, device_from_harness: bool = False) -> None:
        missing = missing_folder(options.pretrained or "")
        if missing:  # at once: the hub would be asked for it first (up to 20 s for a not-found)
            raise RMError(f"prb-rm: pretrained={options.pretrained}: {missing}; give the folder of a saved model "
                          "or a Hugging Face model id (ORG/NAME)")
        torch, transformers = _import_stack()
        self._torch = torch
        self.options = options
        self.device = resolve_device(options.device, from_harness=device_from_harness)
        self.dtype = resolve_dtype(self._dtype_name(options), self.device)
        self._notes: list[str] = []
        self.truncated = 0
        self.scored = 0

        source = options.pretrained or ""
        common = {"revision": options.revision, "trust_remote_code": options.trust_remote_code}
        if not Path(source).expanduser().exists():
            access, problem = hub_model_access(source)
            if problem:
                raise RMError(f"prb-rm: cannot load pretrained={source!r}: {problem}; download it once on a "
                              "connected machine (`hf download NAME`) or give a local folder")
            common.update(access)
        # transformers renamed torch_dtype to dtype in 4.56.
        major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
        dtype_key = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
        verbosity = transformers.logging.get_verbosity()
        plain_transformers_logs()  # loaded under prb-rm's bar: its own bar moved the cursor in a log file
        # transformers prints a table of missing weights at load time; _check_head says it in one line.
        transformers.logging.set_verbosity_error()
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(source, **common)
            placement = self._load_kwargs(transformers)
            self.model, loading = transformers.AutoModelForSequenceClassification.from_pretrained(
                source, **common, **{dtype_key: self.dtype}, **placement, output_loading_info=True
            )
        except (OSError, ValueError) as exc:
            if "trust_remote_code" in str(exc) and not options.trust_remote_code:
                raise RMError(f"prb-rm: pretrained={source!r} needs its own Python code to load; if you trust it, "
                              "add trust_remote_code=true to --model_args (never done unless asked)") from None
            raise RMError(f"prb-rm: cannot load pretrained={source!r}: {_first_line(exc)}") from None
        finally:
            transformers.logging.set_verbosity(verbosity)
        self.random_weights = sorted(loading.get("missing_keys") or ()) + sorted(
            str(k[0]) if isinstance(k, tuple) else str(k) for k in loading.get("mismatched_keys") or ())
        self._check_head(source)
        if "device_map" not in placement:  # a quantized model is placed by its loader and cannot be moved
            self.model.to(self.device)
        self.model.eval()

        self.num_labels = int(self.model.config.num_labels)
        self._configure(options)
        self.pad_id = self._setup_padding()
        self.batch_size = options.effective_batch_size if self.pad_id is not None else 1
        forward_args = inspect.signature(self.model.forward).parameters
        self._takes_positions = "position_ids" in forward_args
        self._takes_token_types = "token_type_ids" in forward_args

        local = Path(source).expanduser()
        if local.is_dir():
            model_id, revision = str(local.resolve()), _folder_fingerprint(local)
        else:
            model_id = source
            revision = getattr(self.model.config, "_commit_hash", None) or options.revision or "main"
        # Weights drawn at random this run are no reward model: such scores are never cached.
        self.identity = None if self.random_weights else ScorerIdentity(
            kind="hf", model=model_id, revision=revision,
            dtype=str(self.dtype).replace("torch.", ""), head=self.head, max_length=self.max_length,
            extra=self._identity_extra(),
        )

    def _check_head(self, source: str) -> None:
        """Refuse a checkpoint whose head (or any weight) transformers had to initialise at random."""
        if not self.random_weights:
            return
        shown = ", ".join(self.random_weights[:4]) + (", ..." if len(self.random_weights) > 4 else "")
        one = len(self.random_weights) == 1
        if not self.options.allow_random_head:
            raise RMError(
                f"prb-rm: pretrained={source!r} is not a reward model: {shown} {'is' if one else 'are'} not in "
                f"the checkpoint, so transformers initialised {'it' if one else 'them'} at random and the "
                "scores would be noise; use a reward-model checkpoint "
                "(a sequence classifier trained on preferences), or pass allow_random_head=true to score "
                "with random weights anyway (those scores are never cached)"
            )
        self._notes.append(f"allow_random_head=true: {shown} initialised at random, so scores are noise "
                           "and were not cached")


    # -- setup (the official protocol's scorer overrides these)

    def _dtype_name(self, options: RMOptions) -> str:
        return options.dtype

    def _load_kwargs(self, transformers: Any) -> dict[str, Any]:
        """More ``from_pretrained`` arguments (quantization and placement); none here.

        Args:
            transformers: the imported module.
        """
        return {}

    def _configure(self, options: RMOptions) -> None:
        """Input format, head, token limit and truncation side."""
        self.tokenizer.truncation_side = options.truncation_side
        self.format: InputFormat = resolve_format(
            options.input_format, bool(getattr(self.tokenizer, "chat_template", None))
        )
        self.head = resolve_head(options.head, self.num_labels)
        self.max_length = options.max_length or _token_limit(self.tokenizer, self.model.config)

    def _identity_extra(self) -> tuple[tuple[str, str], ...]:
        return (("protocol", "clean"), ("format", self.format),
                ("truncation_side", self.options.truncation_side))

    def _setup_padding(self) -> int | None:
        config = self.model.config
        text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
        pad = text_config.pad_token_id if text_config.pad_token_id is not None else config.pad_token_id
        if pad is None:
            for label, candidate in (("pad", self.tokenizer.pad_token_id), ("EOS", self.tokenizer.eos_token_id),
                                     ("UNK", self.tokenizer.unk_token_id)):
                if candidate is not None:
                    pad = int(candidate)
                    if label != "pad":
                        self._notes.append(
                            f"the tokenizer has no pad token: batches are padded with the {label} id {pad} "
                            "(the model reads its score at the last token that is not this id)"
                        )
                    break
        if pad is None:
            self._notes.append("no pad, EOS or UNK token: responses were scored one at a time")
            return None
        # The head finds the scored token by this id, so it must be the one we pad with.
        config.pad_token_id = pad
        if text_config is not config:
            text_config.pad_token_id = pad
        return int(pad)

    # -- inputs

    def formatted(self, item: RMInput) -> str:
        return render(item, self.format, self.tokenizer)

    def _encode(self, items: Sequence[RMInput], texts: Sequence[str], truncate: bool) -> list[dict[str, list[int]]]:
        limits: dict[str, Any] = (
            {"truncation": "longest_first" if self.format == "pair" else True, "max_length": self.max_length}
            if truncate else {"truncation": False}
        )
        if self.format == "pair":
            encoded = self.tokenizer([i.prompt for i in items], [i.response for i in items],
                                     add_special_tokens=True, verbose=False, **limits)
        else:
            # A chat template writes its own special tokens (BOS, turn markers), so the
            # tokenizer must not add more; plain text gets the tokenizer's usual ones.
            encoded = self.tokenizer(list(texts), add_special_tokens=self.format == "plain",
                                     verbose=False, **limits)
        keys = ["input_ids"] + (["token_type_ids"] if self._takes_token_types and "token_type_ids" in encoded else [])
        return [{k: list(encoded[k][n]) for k in keys} for n in range(len(texts))]

    def _features(self, items: Sequence[RMInput]) -> list[dict[str, Sequence[int]]]:
        """Each input's token ids after truncation, as compact integer arrays.

        The tokenizer sees ``ENCODE_CHUNK`` inputs at a time: its output for a whole run
        (every token's offsets and masks, before truncation) held gigabytes on the
        full benchmark's profile prompts, and grew with the data. The inputs are
        formatted a chunk at a time too, so their texts are let go once tokenized.
        """
        features: list[dict[str, Sequence[int]]] = []
        for start in range(0, len(items), ENCODE_CHUNK):
            chunk_items = items[start:start + ENCODE_CHUNK]
            chunk_texts = [self.formatted(item) for item in chunk_items]
            chunk = self._encode(chunk_items, chunk_texts, truncate=False)
            long = [n for n, f in enumerate(chunk) if len(f["input_ids"]) > self.max_length]
            if long:
                self.truncated += len(long)
                redone = self._encode([chunk_items[n] for n in long], [chunk_texts[n] for n in long], truncate=True)
                for n, feature in zip(long, redone):
                    if len(feature["input_ids"]) > self.max_length:  # a tokenizer that ignores truncation
                        left = self.options.truncation_side == "left"
                        cut = slice(-self.max_length, None) if left else slice(0, self.max_length)
                        feature = {k: v[cut] for k, v in feature.items()}
                    chunk[n] = feature
            # 4-byte ids: every vocabulary fits, and a kept run of 512-token inputs halves next to 8-byte ones.
            features.extend({k: array("i", v) for k, v in feature.items()} for feature in chunk)
        return features

    def token_ids(self, item: RMInput) -> list[int]:
        """The token ids the model reads for ``item`` (after truncation, before padding).

        Args:
            item: prompt and response.
        """
        counted = self.truncated
        ids = self._features([item])[0]["input_ids"]
        self.truncated = counted
        return list(ids)

    # -- scoring

    def _collate(self, batch: list[dict[str, list[int]]]) -> dict[str, Any]:
        torch = self._torch
        width = max(len(f["input_ids"]) for f in batch)
        left = self.options.padding_side == "left"
        pad_id = self.pad_id if self.pad_id is not None else 0
        type_pad = getattr(self.tokenizer, "pad_token_type_id", 0) or 0
        columns: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": []}
        if "token_type_ids" in batch[0]:
            columns["token_type_ids"] = []

        def padded(values: list[int], fill: int) -> list[int]:
            gap = [fill] * (width - len(values))
            return gap + values if left else values + gap

        for feature in batch:
            ids = feature["input_ids"]
            columns["input_ids"].append(padded(ids, pad_id))
            columns["attention_mask"].append(padded([1] * len(ids), 0))
            if "token_type_ids" in columns:
                columns["token_type_ids"].append(padded(feature["token_type_ids"], type_pad))
        tensors = {k: torch.tensor(v, dtype=torch.long, device=self.device) for k, v in columns.items()}
        if left and self._takes_positions:
            # Real tokens get positions 0..n-1 as they would unpadded.
            tensors["position_ids"] = (tensors["attention_mask"].cumsum(-1) - 1).clamp(min=0)
        return tensors

    def _forward(self, batch: list[dict[str, list[int]]]) -> list[list[float]]:
        torch = self._torch
        try:
            with torch.inference_mode():
                output = self.model(**self._collate(batch))
        except torch.cuda.OutOfMemoryError:
            if len(batch) == 1:
                raise
            torch.cuda.empty_cache()
            half = len(batch) // 2
            self.batch_size = max(1, half)
            self._notes.append(f"out of GPU memory: batch size lowered to {self.batch_size}")
            return self._forward(batch[:half]) + self._forward(batch[half:])
        logits = output.logits if hasattr(output, "logits") else output[0]
        return logits.float().reshape(len(batch), -1).cpu().tolist()

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        features = self._features(items)
        rewards: list[float] = [0.0] * len(items)
        lengths = [len(f["input_ids"]) for f in features]
        for batch in sorted_batches(lengths, self.batch_size):
            values = self._forward([{k: list(v) for k, v in features[n].items()} for n in batch])
            scores = [reward(v, self.head) for v in values]
            for n, s in zip(batch, scores):
                rewards[n] = s
            self.scored += len(batch)
            if report:
                report(batch, scores)
        return rewards

    def notes(self) -> list[str]:
        if not self.scored:
            return []
        lines = [f"scored on {self.device} in {str(self.dtype).replace('torch.', '')}, batch size {self.batch_size}, "
                 f"input format {self.format}, head {self.head}"]
        lines += list(dict.fromkeys(self._notes))
        if self.scored:
            lines.append(f"{self.truncated} of {self.scored} inputs were longer than max_length="
                         f"{self.max_length} tokens and were truncated ({self.options.truncation_side} side)")
        return lines

"""Validated ``--model_args`` of ``prb-rm``.

lm-eval hands every ``key=value`` of ``--model_args`` to the model constructor (values
already turned into int/float/bool where they look like one). This module is the one
place that checks them: an unknown key or a bad value stops the run with one line
naming the key and what is accepted, before anything heavy is loaded.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from prb_tasks.common.suggest import did_you_mean
from prb_tasks.rm.errors import RMError

ScorerName = Literal["auto", "length", "bm25", "embedding", "hf", "served", "trained"]
Protocol = Literal["clean", "official"]

#: What ``protocol=official`` fixes, as the authors' ``evaluation/pointwise.py`` does it:
#: key -> (values accepted, what the protocol does). Setting one of these keys to
#: anything else is refused, so nobody reports "official" numbers from a changed
#: pipeline. (Their script takes --batch-size, so ``batch_size`` stays free.)
OFFICIAL_FIXED: dict[str, tuple[tuple[Any, ...], str]] = {
    "dtype": (("bfloat16",), "loads the weights in bfloat16"),
    "max_length": ((8192,), "truncates at 8192 tokens"),
    "input_format": (("chat", "auto"), "renders the tokenizer's chat template"),
    "head": (("auto",), "takes the single logit, or the last class's softmax for multi-class heads"),
    "truncation_side": ((), "keeps the tokenizer's own truncation side"),
    "padding_side": ((), "keeps the tokenizer's own padding side"),
}
OFFICIAL_BATCH_SIZE = 8

# lm-eval passes these from its own flags (--batch_size, --max_batch_size, --device) to
# every model, whether the user set them or not.
HARNESS_KEYS = ("batch_size", "max_batch_size", "device")

_SWITCH_WORDS = {"on": True, "true": True, "1": True, "yes": True,
                 "off": False, "false": False, "0": False, "no": False}


class RMOptions(BaseModel):
    """Everything ``prb-rm`` accepts in ``--model_args``.

    Attributes:
        protocol: ``clean`` (default: our pipeline, described below) or ``official``
            (the authors' scalar pipeline, for reproducing the paper: the chat template
            rendered to text and tokenized with the tokenizer's default special tokens,
            bfloat16 weights, scores taken in the model's dtype, the tokenizer's own
            truncation and padding sides, at most 8,192 tokens, batches of 8 in
            dataset order). On ``rewardbench2`` and ``rmbench`` it follows those
            benchmarks' scripts instead (:mod:`prb_tasks.rm.official_pipelines`). Only for
            ``scorer=hf``.
        scorer: ``length``, ``bm25``, ``embedding``, ``hf``, ``served`` or ``trained`` (a
            ``prb train`` checkpoint); ``auto`` (default) means ``trained`` when
            ``pretrained`` is a ``prb train`` folder (it has a ``manifest.json``), ``hf``
            when ``pretrained`` is set, ``served`` when ``endpoint`` is set, otherwise
            ``length``.
        pretrained: hub id or local folder of an ``AutoModelForSequenceClassification``.
        revision: hub branch, tag or commit of ``pretrained``.
        dtype: weights and compute precision; ``auto`` is float32 on CPU and
            bfloat16 (float16 without bf16 support) on CUDA.
        device: ``auto`` (CUDA if available, else CPU), ``cpu``, ``cuda``, ``cuda:N``
            or ``mps``; lm-eval's ``--device`` is used when this is not given.
        trust_remote_code: allow the checkpoint's own Python code (off unless asked).
        allow_random_head: score with a checkpoint some of whose weights (usually the
            classification head of a base language model) are not in it and would be
            initialised at random; refused unless set, and such scores are never cached.
        head: how the classifier output becomes one reward: ``logit`` (the single
            logit; the last class's logit for multi-class heads), ``last_softmax``
            (softmax over classes, probability of the last class) or ``auto``
            (``logit`` for one label, ``last_softmax`` for more).
        input_format: ``chat`` (the tokenizer's chat template over
            ``[user: prompt, assistant: response]``), ``plain`` (``"User: ...\\n\\n
            Assistant: ..."``), ``pair`` (tokenizer text pair, for cross-encoder
            style RMs) or ``auto`` (``chat`` if the tokenizer has a template, else
            ``plain``).
        max_length: longest input in tokens; longer ones are truncated and counted
            (default: the model's limit, at most 4096).
        truncation_side: which end of an over-long input is cut: ``left`` (default:
            keeps the response and the end of the conversation, where decoder RMs
            read their score) or ``right``.
        padding_side: side batches are padded on (scores do not depend on it).
        batch_size: responses per forward pass (default 16, 8 with
            ``protocol=official``; ``auto`` = the default). lm-eval's
            ``--batch_size N`` is used when this is not given, except its default
            of 1 (it cannot be told apart from an explicit 1, and batching never
            changes scores); ``batch_size=1`` here forces one at a time.
        max_batch_size: accepted for lm-eval compatibility and ignored.
        endpoint: base URL of a server hosting the RM (vLLM ``--runner pooling``).
        api: request format at the endpoint: ``classify`` (vLLM ``/classify`` with
            chat ``messages``) or ``pooling`` (vLLM ``/pooling`` with ``messages``).
        api_path: path appended to ``endpoint`` (default ``/classify`` or ``/pooling``).
        served_model: ``model`` field sent to the server (omitted when not set).
        num_concurrent: requests in flight at once.
        max_retries: retries of a request after a 429, a 5xx, a timeout or a
            connection error (exponential backoff with jitter, ``Retry-After`` honoured).
        timeout: seconds to wait for one response.
        embed_top_k: the embedding baseline averages the k best post similarities.
        embed_question_weight: weight of the response-question similarity added to
            the embedding baseline's score (0 = profile only).
        embed_max_posts: the embedding baseline compares responses with the user's
            posts most relevant to the question (BM25), at most this many; 0 = all
            (slow on the full benchmark).
        embed_backend: what runs the embedding baseline's encoder: ``torch`` or
            ``openvino`` (CPU only, extra ``embed-fast``; about 2x faster on a small CPU).
        cache: ``on`` (default) or ``off``: reuse scores stored on disk.
        cache_dir: folder of the score cache (default: the user cache dir,
            ``prb/rm-scores``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    protocol: Protocol = "clean"
    scorer: ScorerName = "auto"
    pretrained: str | None = None
    revision: str | None = None
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    device: str = "auto"
    trust_remote_code: bool = False
    allow_random_head: bool = False
    head: Literal["auto", "logit", "last_softmax"] = "auto"
    input_format: Literal["auto", "chat", "plain", "pair"] = "auto"
    max_length: int | None = Field(default=None, ge=8)
    truncation_side: Literal["left", "right"] = "left"
    padding_side: Literal["left", "right"] = "right"
    batch_size: int | Literal["auto"] | None = None
    max_batch_size: int | None = None
    endpoint: str | None = None
    api: Literal["classify", "pooling"] = "classify"
    api_path: str | None = None
    served_model: str | None = None
    num_concurrent: int = Field(default=8, ge=1, le=512)
    max_retries: int = Field(default=5, ge=0, le=100)
    timeout: float = Field(default=120.0, gt=0)
    embed_top_k: int = Field(default=3, ge=1)
    embed_question_weight: float = Field(default=0.0, ge=0)
    embed_max_posts: int = Field(default=10, ge=0)
    embed_backend: Literal["torch", "openvino"] = "torch"
    cache: bool = True
    cache_dir: str | None = None

    @field_validator("batch_size", mode="before")
    @classmethod
    def _batch_size(cls, value: Any) -> Any:
        # lm-eval's --batch_size also allows "auto:N" (re-tune N times); we pick once.
        if isinstance(value, str) and value.strip().lower().startswith("auto"):
            return "auto"
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        return value

    @field_validator("batch_size")
    @classmethod
    def _positive_batch(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError("must be at least 1")
        return value

    @field_validator("cache", "allow_random_head", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in _SWITCH_WORDS:
            return _SWITCH_WORDS[value.strip().lower()]
        return value

    @field_validator("device")
    @classmethod
    def _device(cls, value: str) -> str:
        name = value.strip().lower()
        base = name.split(":", 1)[0]
        if base not in ("auto", "cpu", "cuda", "mps") or (":" in name and base != "cuda"):
            raise ValueError("expected auto, cpu, cuda, cuda:N or mps")
        if base == "cuda" and ":" in name and not name.split(":", 1)[1].isdigit():
            raise ValueError("expected auto, cpu, cuda, cuda:N or mps")
        return name

    @field_validator("pretrained")
    @classmethod
    def _local_folder_exists(cls, value: str | None) -> str | None:
        # A path that can only be local (./x, /x, ~/x) is never a hub id: say so plainly
        # instead of letting the hub client complain about the id's characters.
        if value and value.startswith((".", "/", "~")) and not Path(value).expanduser().is_dir():
            raise ValueError("no such folder (a local model must be an existing folder; a hub id looks like org/name)")
        return value

    @field_validator("api_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return value if value.startswith("/") else "/" + value

    @model_validator(mode="after")
    def _consistent(self) -> RMOptions:
        if self.pretrained and self.endpoint:
            raise ValueError("give either pretrained= (a local HF model) or endpoint= (a served one), not both")
        chosen = self.kind
        if chosen in ("hf", "trained") and not self.pretrained:
            raise ValueError(f"scorer={chosen} needs pretrained="
                             f"<{'hub id or folder' if chosen == 'hf' else 'the folder prb train --out wrote'}>")
        if chosen == "served" and not self.endpoint:
            raise ValueError("scorer=served needs endpoint=<http(s)://host:port>")
        if chosen != "hf" and self.allow_random_head:
            raise ValueError(f"allow_random_head= is only used by scorer=hf, not scorer={chosen}")
        if chosen not in ("hf", "trained") and self.pretrained:
            raise ValueError(f"pretrained= is only used by scorer=hf, not scorer={chosen}")
        if chosen != "served" and self.endpoint:
            raise ValueError(f"endpoint= is only used by scorer=served, not scorer={chosen}")
        if self.protocol == "official":
            self._check_official(chosen)
        return self

    def _check_official(self, chosen: str) -> None:
        if chosen != "hf":
            raise ValueError("protocol=official reproduces the authors' script, which scores a local HF model: "
                             f"it needs pretrained=<hub id or folder> (scorer=hf), not scorer={chosen}")
        from prb_tasks.common.harness_args import current
        from prb_tasks.rm.official_pipelines import pipeline_for

        # The run's tasks say whose script protocol=official follows (and so what it fixes).
        run = current()
        pipeline = pipeline_for(run.tasks) if run is not None else None
        fixed, script = (pipeline.fixed(), pipeline.script) if pipeline else (OFFICIAL_FIXED, "the authors' script")
        for key, (accepted, what) in fixed.items():
            if key in self.model_fields_set and getattr(self, key) not in accepted:
                raise ValueError(f"protocol=official {what}, as {script} does; "
                                 f"drop {key}= or use protocol=clean")

    @property
    def kind(self) -> str:
        """The scorer actually used (``auto`` resolved)."""
        if self.scorer != "auto":
            return self.scorer
        if self.pretrained:
            from pathlib import Path

            # A prb train checkpoint: its manifest says what it is.
            return "trained" if (Path(self.pretrained).expanduser() / "manifest.json").is_file() else "hf"
        if self.endpoint:
            return "served"
        return "length"

    @property
    def effective_batch_size(self) -> int:
        """``batch_size`` with ``auto`` and the default resolved."""
        if self.batch_size in (None, "auto"):
            return OFFICIAL_BATCH_SIZE if self.protocol == "official" else 16
        return int(self.batch_size)

    @property
    def effective_api_path(self) -> str:
        """``api_path``, or the default path of ``api``."""
        return self.api_path or f"/{self.api}"

    def resolved_cache_dir(self) -> Path:
        """Folder of the score cache."""
        if self.cache_dir:
            return Path(self.cache_dir).expanduser()
        from prb_tasks.common.resources import cache_root

        return cache_root() / "rm-scores"


def accepted_keys() -> list[str]:
    """Every key ``--model_args`` may use, sorted."""
    return sorted(RMOptions.model_fields)


def _typed_text(key: str, value: Any, argv: list[str] | None = None) -> str:
    """``value`` as the user typed it in ``--model_args`` (lm-eval turns ``-1`` into ``-1.0``).

    Args:
        key: the model_args key.
        value: the value lm-eval passed for it.
        argv: the command line (default ``sys.argv``; ``prb eval`` and ``lm_eval`` put the
            user's arguments there while the model is built).
    """
    import sys

    try:
        from lm_eval._cli.utils import handle_cli_value_string, split_top_level
    except ImportError:  # another lm-eval layout: show the value as received
        return str(value)
    words = list(sys.argv if argv is None else argv)
    typed = None
    for flag, text in zip(words, words[1:]):
        if flag != "--model_args" or text.lstrip().startswith("{"):
            continue
        for item in split_top_level(text):
            name, _, raw = item.partition("=")
            if name.strip() == key:
                typed = raw.strip()
    # Only trust the command line if it is where this value came from.
    if typed is not None and handle_cli_value_string(typed) == value:
        return typed
    return str(value)


def _first_problem(error: ValidationError, raw: dict[str, Any]) -> str:
    problem = error.errors()[0]
    location = [str(part) for part in problem.get("loc", ()) if part not in ("", None)]
    message = problem.get("msg", "invalid value").removeprefix("Value error, ")
    if problem.get("type") == "extra_forbidden" and location:
        return (f"prb-rm: unknown model_args key '{location[0]}'{did_you_mean(location[0], accepted_keys())}; "
                "accepted: " + ", ".join(accepted_keys()))
    if location:
        key = location[0]
        hint = ""
        if problem.get("type") == "literal_error" and isinstance(raw.get(key), str):
            hint = did_you_mean(raw[key], re.findall(r"'([^']+)'", str((problem.get("ctx") or {}).get("expected"))))
        return f"prb-rm: model_args {key}={_typed_text(key, raw.get(key))} is invalid{hint}: {message}"
    return f"prb-rm: invalid model_args: {message}"


def parse_options(raw: dict[str, Any]) -> RMOptions:
    """Validate model arguments.

    Args:
        raw: keyword arguments as lm-eval passes them (``None`` values dropped).

    Raises:
        RMError: one line naming the offending key, or the conflict.
    """
    cleaned = {k: v for k, v in raw.items() if v is not None}
    try:
        return RMOptions(**cleaned)
    except ValidationError as exc:
        raise RMError(_first_problem(exc, cleaned)) from None

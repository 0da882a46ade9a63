"""``prb train``'s options, validated at the boundary (one line per mistake)."""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from prb_tasks.common.errors import PRBError
from prb_tasks.common.metadata_arg import data_command_metadata
from prb_tasks.common.suggest import did_you_mean
from prb_tasks.data import families

Architecture = Literal["plain", "context", "latent", "mixture"]
PARTS = ("demographics", "history", "profile")


class TrainError(PRBError):
    """A mistake in ``prb train``'s input; the message is one line for the user."""


class TrainOptions(BaseModel):
    """Everything ``prb train`` is told (each field's description says what it does)."""

    model_config = ConfigDict(extra="forbid")

    data: str = Field(description="a PersonalLLM folder, a preference file (or 'example'), a Personalized "
                      "RewardBench folder (or 'sample')")
    family: Optional[str] = Field(None, description="what DATA holds (None: guessed as prb data validate does)")
    metadata: dict[str, Any] = Field(default_factory=dict, description="the few-shot tasks' --metadata keys "
                                     "(n_users, alpha, unseen_share, split_seed, queries, ...)")
    architecture: Architecture = Field(description="plain, context, latent or mixture")
    backbone: str = Field(description="a Hugging Face model id or folder (loaded with AutoModel)")
    out: str = Field(description="the checkpoint folder to write")
    input_format: Literal["plain", "chat"] = Field("plain", description="plain text, or the backbone's chat "
                                                   "template (then the tokenizer must have one)")
    context_parts: Optional[tuple[str, ...]] = Field(None, description="context: which of demographics, "
                                                     "history, profile (None: those the data has)")
    budget: int = Field(256, ge=1, description="context: the user text's most tokens")
    max_length: int = Field(512, ge=8, description="most tokens of one RM input (cut from the left)")
    support_max: int = Field(8, ge=0, description="latent/context history: most support pairs per training pair")
    latent_dim: int = Field(16, ge=1, description="latent: size of the user latent")
    variational: bool = Field(False, description="latent: a variational encoder with a KL term")
    kl_weight: float = Field(0.01, ge=0, description="latent: weight of the KL term")
    heads: int = Field(4, ge=1, description="mixture: reward heads (the basis' rank)")
    user_learning_rate: float = Field(0.1, gt=0, description="mixture: Adam's learning rate of the seen users' "
                                      "weights in training (each sees only its own user's pairs; the rate that "
                                      "fits an unseen user's)")
    adapt_steps: int = Field(200, ge=1, description="mixture: Adam steps fitting an unseen user's weights")
    adapt_l2: float = Field(0.01, ge=0, description="mixture: penalty on an unseen user's logits")
    epochs: float = Field(1.0, gt=0, description="passes over the training pairs")
    max_steps: int = Field(-1, description="optimizer steps (overrides epochs when above 0)")
    learning_rate: float = Field(5e-5, gt=0, description="AdamW's learning rate")
    batch_size: int = Field(8, ge=1, description="pairs per device and step")
    seed: int = Field(0, ge=0, description="seed of the training run and of the support sampling")
    holdout_share: float = Field(0.2, gt=0, lt=1, description="data without a split (Personalized RewardBench): "
                                 "share of each subset's rows held out of training, named in OUT/heldout_rows.txt "
                                 "for the evaluation")
    holdout_seed: Optional[int] = Field(None, ge=0, description="seed of the held-out rows (None: --seed); "
                                        "--seeds keeps the first seed's, so every seed is scored on the same rows")
    bf16: bool = Field(False, description="train in bfloat16 mixed precision (GPUs that have it)")
    deepspeed: Optional[str] = Field(None, description="a DeepSpeed config file, handed to the Trainer")

    @field_validator("family")
    @classmethod
    def _registered(cls, value: Optional[str]) -> Optional[str]:
        return families.check_choice(value, "train")

    @field_validator("context_parts", mode="before")
    @classmethod
    def _parts(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        items = [p.strip() for p in value.split(",")] if isinstance(value, str) else list(value)
        unknown = [p for p in items if p not in PARTS]
        if unknown or not items:
            raise ValueError(f"unknown part {', '.join(map(repr, unknown)) or '(none)'}; give a comma-separated "
                             f"list of {', '.join(PARTS)}")
        return tuple(items)

    def model_options(self) -> dict[str, Any]:
        """The options the architecture and its method need again at load time."""
        keys = ("input_format", "context_parts", "budget", "max_length", "support_max", "latent_dim",
                "variational", "kl_weight", "heads", "adapt_steps", "adapt_l2")
        return {k: getattr(self, k) for k in keys}


def parse(values: dict[str, Any], metadata: str | None) -> TrainOptions:
    """The command line's values as :class:`TrainOptions`; a mistake is one :class:`TrainError` line.

    Args:
        values: option name -> value (None: not given).
        metadata: ``--metadata`` as given (JSON text) or None.
    """
    extra = data_command_metadata(metadata, "prb train", TrainError)
    try:
        return TrainOptions(**{k: v for k, v in values.items() if v is not None}, metadata=extra)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "--" + "-".join(str(p) for p in first["loc"]).replace("_", "-") if first["loc"] else "prb train"
        if first["type"] == "missing":
            field = TrainOptions.model_fields[str(first["loc"][0])]
            raise TrainError(f"prb train: give {where} ({field.description})") from None
        # A choice mistyped (--architecture contex): name the nearest choice too.
        choices = re.findall(r"'([^']*)'", str((first.get("ctx") or {}).get("expected", "")))
        typed = first.get("input")
        hint = did_you_mean(typed, choices) if first["type"] == "literal_error" and isinstance(typed, str) else ""
        raise TrainError(f"prb train: {where}: {first['msg'].removeprefix('Value error, ')}{hint}") from None

"""Validated settings of ``prb-judge``: ``--model_args`` merged over a judge config.

Both sources go through the same pydantic model, so a typo in either is reported
with the key's name instead of being silently ignored. Values that would change the
judge's answers (model, sampling, token budget, reasoning) are part of the cache key;
the rest (concurrency, retries, timeouts, keys) are not.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.suggest import did_you_mean

CacheMode = Literal["on", "off", "read", "write", "refresh"]
Transport = Literal["auto", "litellm", "direct"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]

DEFAULT_REASK_PROMPT = (
    "Your reply did not end with a verdict. Answer with exactly one line: "
    "`Result: A` or `Result: B`."
)

# Keys lm-eval adds to every model's arguments; accepted and ignored.
HARNESS_KEYS = ("batch_size", "max_batch_size", "device")

# Providers whose model id plus an ``api_base`` means "an OpenAI-compatible server".
OPENAI_COMPATIBLE_PREFIXES = ("openai/", "hosted_vllm/")


class JudgeSettings(BaseModel):
    """Everything a judge config or ``--model_args`` may set.

    Attributes:
        model: litellm model id, e.g. ``openai/gpt-4o-mini``, ``anthropic/claude-haiku-4-5``,
            ``ollama_chat/qwen3:8b``, ``openai/<served name>`` with ``api_base``.
        api_base: server URL for local or proxied models (vLLM, llama.cpp, Ollama).
        api_key_env: name of the environment variable holding the key (default: the
            provider's usual one, e.g. ``OPENAI_API_KEY``). Keys never go in model_args.
        transport: ``litellm`` always calls through litellm; ``direct`` speaks the OpenAI
            chat protocol itself (only for ``openai/`` or ``hosted_vllm/`` models with an
            ``api_base``; ~10x less CPU per call); ``auto`` picks ``direct`` when allowed.
        num_concurrent: most requests in flight.
        rpm: requests-per-minute ceiling (none by default).
        tpm: tokens-per-minute ceiling, counting prompt estimate plus max_tokens.
        max_retries: retries of a transient failure before it becomes an error outcome.
        timeout: seconds allowed for one HTTP attempt.
        backoff_base: first retry delay in seconds (doubles per attempt, with jitter).
        backoff_max: longest computed retry delay in seconds.
        cache: ``on`` (read and write), ``off``, ``read`` (never write), ``write`` (never
            read; store answers not yet stored), ``refresh`` (never read; overwrite).
        cache_dir: cache folder (default ``$PRB_CACHE_DIR/judge`` or the user cache dir).
        temperature: overrides the task's temperature; ``omit`` sends none (reasoning models).
        top_p: nucleus sampling value to send.
        seed: sampling seed to send.
        max_tokens: overrides the task's ``max_gen_toks``.
        stop: stop sequences; overrides the task's ``until``.
        response_format: provider response format, e.g. ``{"type": "json_object"}``.
        reasoning_effort: reasoning budget for models that support it.
        input_cost_per_mtok: dollars per million prompt tokens (for local/unknown models).
        output_cost_per_mtok: dollars per million completion tokens (incl. reasoning).
        max_cost: dollars of new spending after which remaining judgments are skipped.
        reask: ask once more, for the verdict only, when a completion has none.
        reask_prompt: the follow-up user message used by ``reask``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    transport: Transport = "auto"
    num_concurrent: int = Field(16, ge=1, le=4096)
    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)
    max_retries: int = Field(6, ge=0, le=100)
    timeout: float = Field(120.0, gt=0)
    backoff_base: float = Field(1.0, ge=0)
    backoff_max: float = Field(60.0, gt=0)
    cache: CacheMode = "on"
    cache_dir: str | None = None
    temperature: float | Literal["omit"] | None = None
    top_p: float | None = Field(None, ge=0, le=1)
    seed: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    stop: list[str] | None = None
    response_format: dict[str, Any] | None = None
    reasoning_effort: ReasoningEffort | None = None
    input_cost_per_mtok: float | None = Field(None, ge=0)
    output_cost_per_mtok: float | None = Field(None, ge=0)
    max_cost: float | None = Field(None, gt=0)
    reask: bool = False
    reask_prompt: str = DEFAULT_REASK_PROMPT

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and (not value or not value.replace("_", "").isalnum()):
            raise ValueError("must be an environment variable name such as MY_API_KEY")
        return value

    @field_validator("stop", mode="before")
    @classmethod
    def _stop_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("api_base")
    @classmethod
    def _base(cls, value: str | None) -> str | None:
        # A trailing slash is the same server; keep the cache key stable.
        return value.rstrip("/") if value else None

    @model_validator(mode="after")
    def _prices_in_pairs(self) -> JudgeSettings:
        if (self.input_cost_per_mtok is None) != (self.output_cost_per_mtok is None):
            raise ValueError(
                "set both input_cost_per_mtok and output_cost_per_mtok (a missing price "
                "would be counted as unknown)"
            )
        return self

    @property
    def model_id(self) -> str:
        """The litellm model id (validated to be present by :func:`resolve_settings`)."""
        assert self.model is not None
        return self.model

    def use_direct(self) -> bool:
        """True when calls go straight to an OpenAI-compatible server."""
        allowed = bool(self.api_base) and self.model_id.startswith(OPENAI_COMPATIBLE_PREFIXES)
        if self.transport == "direct":
            return allowed
        return self.transport == "auto" and allowed


class ConfigFile(JudgeSettings):
    """A judge config YAML: settings plus a human description."""

    description: str | None = None


class ModelArgs(JudgeSettings):
    """``--model_args``: settings, a config to start from, and lm-eval's own keys."""

    config: str | None = None
    batch_size: Any = None
    max_batch_size: Any = None
    device: Any = None


def _describe(exc: ValidationError, where: str, known: set[str]) -> str:
    problems: list[str] = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(settings)"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown key '{loc}'{did_you_mean(loc, known)}")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(f"'{loc}': {msg}" if err["loc"] else msg)
    accepted = ", ".join(sorted(known))
    text = "; ".join(problems)
    if any(p.startswith("unknown key") for p in problems):
        text += f" (accepted: {accepted})"
    return f"prb-judge: {where}: {text}"


def _reject_raw_key(raw: dict[str, Any], where: str) -> None:
    if any(k.lower() in ("api_key", "key", "apikey") for k in raw):
        raise JudgeConfigError(
            f"prb-judge: {where}: do not pass an API key here (lm-eval writes model_args "
            "into results files); export it and pass api_key_env=NAME instead"
        )


def parse_config_file(raw: Any, where: str) -> dict[str, Any]:
    """Validate a loaded config YAML; return only the keys it sets.

    Args:
        raw: the parsed YAML document.
        where: how to name the file in messages.
    """
    if not isinstance(raw, dict):
        raise JudgeConfigError(f"prb-judge: {where}: a judge config must be a mapping of keys to values")
    _reject_raw_key(raw, where)
    try:
        parsed = ConfigFile(**raw)
    except ValidationError as exc:
        raise JudgeConfigError(_describe(exc, where, set(ConfigFile.model_fields))) from None
    values = parsed.model_dump(exclude_unset=True)
    values.pop("description", None)
    return values


def resolve_settings(model_args: dict[str, Any]) -> JudgeSettings:
    """Validate ``--model_args``, load the config it names, and merge (model_args win).

    Args:
        model_args: keyword arguments lm-eval passed to the model.
    """
    from prb_tasks.judge.configs import load_config

    _reject_raw_key(model_args, "model_args")
    try:
        args = ModelArgs(**model_args)
    except ValidationError as exc:
        raise JudgeConfigError(_describe(exc, "model_args", set(ModelArgs.model_fields))) from None
    merged: dict[str, Any] = load_config(args.config) if args.config else {}
    own = args.model_dump(exclude_unset=True)
    for key in ("config", *HARNESS_KEYS):
        own.pop(key, None)
    merged.update(own)
    try:
        settings = JudgeSettings(**merged)
    except ValidationError as exc:
        raise JudgeConfigError(_describe(exc, "model_args", set(ModelArgs.model_fields))) from None
    if not settings.model:
        from prb_tasks.judge.configs import list_configs

        raise JudgeConfigError(
            "prb-judge: no model given; pass model=<litellm id> (e.g. model=openai/gpt-4o-mini) "
            f"or config=<name> (bundled: {', '.join(sorted(list_configs()))})"
        )
    if settings.transport == "direct" and not settings.use_direct():
        raise JudgeConfigError(
            "prb-judge: transport=direct needs an openai/ or hosted_vllm/ model with api_base; "
            "use transport=litellm for other providers"
        )
    if settings.api_key_env and settings.api_key_env not in os.environ:
        raise JudgeConfigError(
            f"prb-judge: api_key_env={settings.api_key_env} but that environment variable is not set"
        )
    return settings

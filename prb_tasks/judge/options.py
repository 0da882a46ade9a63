"""Validated settings of ``prb-judge``: the schema ``--model_args`` and judge configs share.

:func:`prb_tasks.judge.configs.resolve_settings` merges the two.

Both sources go through the same pydantic model, so a typo in either is reported
with the key's name instead of being silently ignored. Values that would change the
judge's answers (model, sampling, token budget, reasoning) are part of the cache key;
the rest (concurrency, retries, timeouts, keys) are not.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from prb_tasks.common.keyargs import KEY_SOURCE, refuse_key_arguments
from prb_tasks.common.suggest import did_you_mean
from prb_tasks.judge.errors import JudgeConfigError

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

# Alternatives per token asked for with ``logprobs=true`` (OpenAI allows up to 20).
DEFAULT_TOP_LOGPROBS = 5

# Providers whose batch APIs ``batch=true`` speaks.
BATCH_PREFIXES = ("openai/", "anthropic/")


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
        stop_after_timeouts: attempts in a row (across all judgments, any time in the
            run) without a reply within ``timeout``, with nothing answering for
            ``stop_after_silence`` seconds or twice ``timeout`` (the longer), after which
            the server counts as frozen: the run stops sending, the rest are skipped and
            results are written (exit status 3); 0 never stops for timeouts.
        stop_after_silence: the shortest outage, in seconds without any reply, that may
            count as a frozen server (twice ``timeout`` when that is longer): a server
            pausing for a few seconds now and then does not stop the run.
        backoff_base: first retry delay in seconds (doubles per attempt, with jitter).
        backoff_max: longest computed retry delay in seconds.
        max_wait: most seconds one judgment may spend waiting between attempts (backoff
            and ``Retry-After`` together); a provider asking for a longer wait (a quota
            exhausted for hours) stops the run.
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
        logprobs: soft verdicts: ask an OpenAI-compatible server for log-probabilities with
            this many alternatives per token (``true``: 5; 2-20; ``false`` or 0: not asked),
            and read the verdict letters' probabilities at the verdict position
            (:mod:`prb_tasks.replies.soft_verdict`). A server that returns none stops the run.
        reasoning_retry_tokens: ask once more, with this ``max_tokens``, a reply that spent its
            whole budget on hidden reasoning and has no verdict (finish reason ``length``); the
            reply kept says so and the usage summary counts it (:mod:`prb_tasks.judge.reasoning_budget`).
        input_cost_per_mtok: dollars per million prompt tokens (for local/unknown models).
        output_cost_per_mtok: dollars per million completion tokens (incl. reasoning).
        cached_input_cost_per_mtok: dollars per million prompt tokens read from the
            provider's prompt cache (default: the input price).
        max_cost: dollars of new spending after which remaining judgments are skipped.
        reask: ask once more, for the verdict only, when a completion has none.
        reask_prompt: the follow-up user message used by ``reask``.
        dry_run: build every request, count cached ones, input tokens and expected
            output tokens, print the cost at standard and batch prices, send nothing
            and write no results.
        batch: send the requests not yet cached through the provider's batch API
            (OpenAI, Anthropic; about half the price, answers within 24 hours), store
            the answers in the cache, then finish the run from the cache.
        batch_wait: with ``batch``, wait for the batches to end (``false``: submit,
            print how to collect, and stop without results; the same command collects).
        batch_poll: seconds between status checks of submitted batches.
        batch_max_requests: most requests per batch (default: the provider's limit,
            50,000 for OpenAI, 100,000 for Anthropic; batches also stay under its size limit).
        batch_retries: how many later batches may retry a request that failed inside a
            batch with a transient error, before it becomes an error outcome.
    """

    # inf/nan are refused: ``max_cost=inf`` or ``timeout=nan`` would silently disable a limit.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    transport: Transport = "auto"
    num_concurrent: int = Field(16, ge=1, le=4096)
    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)
    max_retries: int = Field(6, ge=0, le=100)
    timeout: float = Field(120.0, gt=0)
    stop_after_timeouts: int = Field(10, ge=0)
    stop_after_silence: float = Field(30.0, ge=0)
    backoff_base: float = Field(1.0, ge=0)
    backoff_max: float = Field(60.0, gt=0)
    max_wait: float = Field(600.0, gt=0)
    cache: CacheMode = "on"
    cache_dir: str | None = None
    temperature: float | Literal["omit"] | None = None
    top_p: float | None = Field(None, ge=0, le=1)
    seed: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    stop: list[str] | None = None
    response_format: dict[str, Any] | None = None
    reasoning_effort: ReasoningEffort | None = None
    logprobs: int = 0
    reasoning_retry_tokens: int | None = Field(None, ge=1)
    input_cost_per_mtok: float | None = Field(None, ge=0)
    output_cost_per_mtok: float | None = Field(None, ge=0)
    cached_input_cost_per_mtok: float | None = Field(None, ge=0)
    max_cost: float | None = Field(None, gt=0)
    reask: bool = False
    reask_prompt: str = DEFAULT_REASK_PROMPT
    dry_run: bool = False
    batch: bool = False
    batch_wait: bool = True
    batch_poll: float = Field(30.0, gt=0)
    batch_max_requests: int | None = Field(None, ge=1)
    batch_retries: int = Field(2, ge=0, le=20)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and (not value or not value.replace("_", "").isalnum()):
            raise ValueError("must be an environment variable name such as MY_API_KEY")
        return value

    @field_validator("logprobs", mode="before")
    @classmethod
    def _logprobs(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            value = value.strip().lower() == "true"
        if isinstance(value, bool):
            return DEFAULT_TOP_LOGPROBS if value else 0
        if isinstance(value, int) and value != 0 and not 2 <= value <= 20:
            raise ValueError("is the number of alternatives per token to ask for: true, or 2 to 20 (both verdict "
                             "letters must be among them), or false")
        return value

    @field_validator("stop", mode="before")
    @classmethod
    def _stop_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("api_base")
    @classmethod
    def _base(cls, value: str | None) -> str | None:
        from prb_tasks.common.keyargs import has_url_credentials
        from prb_tasks.common.redact import register_url_secrets

        # A key in the query (?key=...) works, so it is kept, but hidden from all prb prints.
        register_url_secrets(value)
        if has_url_credentials(value):
            # Said without the URL: the message may be printed and logged.
            raise ValueError("has a user name or password in it (http://USER:PASSWORD@host/...); give the URL "
                             "without them and the key through api_key_env=NAME")
        # A trailing slash is the same server; keep the cache key stable.
        return value.rstrip("/") if value else None

    @model_validator(mode="after")
    def _prices_in_pairs(self) -> JudgeSettings:
        if (self.input_cost_per_mtok is None) != (self.output_cost_per_mtok is None):
            raise ValueError(
                "set both input_cost_per_mtok and output_cost_per_mtok (a missing price "
                "would be counted as unknown)"
            )
        if self.cached_input_cost_per_mtok is not None and self.input_cost_per_mtok is None:
            raise ValueError("cached_input_cost_per_mtok needs input_cost_per_mtok and output_cost_per_mtok too")
        return self

    @model_validator(mode="after")
    def _batch_options(self) -> JudgeSettings:
        if not self.batch:
            extra = sorted(self.model_fields_set & {"batch_wait", "batch_poll", "batch_max_requests", "batch_retries"})
            if extra:
                raise ValueError(f"{', '.join(extra)}: only used with batch=true")
            return self
        if self.model and not self.model.startswith(BATCH_PREFIXES):
            raise ValueError(
                f"batch=true works with OpenAI (openai/...) and Anthropic (anthropic/...) models, not {self.model}"
            )
        if self.logprobs:
            raise ValueError("logprobs cannot be read from batch answers yet; run without batch=true for soft verdicts")
        if self.cache != "on":
            raise ValueError("batch=true stores answers in the cache and finishes from it: it needs cache=on")
        if self.max_cost is not None:
            raise ValueError(
                "max_cost cannot be enforced with batch=true (a batch is billed as a whole); "
                "run with dry_run=true first to see the cost"
            )
        return self

    @property
    def model_id(self) -> str:
        """The litellm model id (validated to be present by :func:`prb_tasks.judge.configs.resolve_settings`)."""
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


#: lm-eval's names for prb-judge's keys (its API backends' ``--model_args``): a habit, not a typo,
#: so no spelling is near; the suggestion names prb-judge's key.
HARNESS_NAMES = {"base_url": "api_base", "pretrained": "model", "max_gen_toks": "max_tokens"}


def _suggestion(key: str, known: set[str]) -> str:
    ours = HARNESS_NAMES.get(key)
    if ours is not None and ours in known:
        return f" (did you mean '{ours}'? lm-eval's API backends call it {key})"
    return did_you_mean(key, known)


def describe_error(exc: ValidationError, where: str, known: set[str]) -> str:
    """One line naming every bad key of ``exc`` (unknown keys with a suggestion).

    Args:
        exc: pydantic's validation error.
        where: how to name the source in the message (``model_args``, ``config x.yaml``).
        known: the accepted keys, for suggestions and the list of accepted keys.
    """
    problems: list[str] = []
    # A value that fits no branch of a union (``temperature``: a number or ``omit``)
    # gives one error per branch: say them as one.
    by_key: dict[str, list[str]] = {}
    for err in exc.errors():
        loc = str(err["loc"][0]) if err["loc"] else "(settings)"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown key '{loc}'{_suggestion(loc, known)}")
            continue
        msg = err["msg"].removeprefix("Value error, ")
        if loc in by_key:
            by_key[loc].append(msg.removeprefix("Input should be "))
        else:
            by_key[loc] = [msg]
            problems.append(loc)
    problems = [
        p if p.startswith("unknown key") else (f"'{p}': " if p != "(settings)" else "") + " or ".join(by_key[p])
        for p in problems
    ]
    accepted = ", ".join(sorted(known))
    text = "; ".join(problems)
    if any(p.startswith("unknown key") for p in problems):
        text += f" (accepted: {accepted})"
    return f"prb-judge: {where}: {text}"


def reject_raw_key(raw: dict[str, Any], where: str) -> None:
    """Refuse an API key written into ``raw`` (model_args or a config file), naming ``where``."""
    refuse_key_arguments(raw, f"prb-judge: {where}", KEY_SOURCE["prb-judge"], JudgeConfigError)


def parse_config_file(raw: Any, where: str) -> dict[str, Any]:
    """Validate a loaded config YAML; return only the keys it sets.

    Args:
        raw: the parsed YAML document.
        where: how to name the file in messages.
    """
    if not isinstance(raw, dict):
        raise JudgeConfigError(f"prb-judge: {where}: a judge config must be a mapping of keys to values")
    reject_raw_key(raw, where)
    try:
        parsed = ConfigFile(**raw)
    except ValidationError as exc:
        raise JudgeConfigError(describe_error(exc, where, set(ConfigFile.model_fields))) from None
    values = parsed.model_dump(exclude_unset=True)
    values.pop("description", None)
    return values

"""Keep API keys out of everything prb writes or prints.

litellm reads a provider's key from the environment by itself (``ANTHROPIC_API_KEY``,
``GEMINI_API_KEY``, ...), so a server that echoes the key it received in an error body
(or even in a reply) could carry it into a sample, a usage file, a cache entry or a
log line. Every such text goes through :func:`redact`, which replaces the *values* of
all credential variables present in the environment with ``***``.

Which variables count as credentials:

* every name in :data:`PROVIDER_KEY_VARS` (the key variables of the providers litellm
  reaches, by provider) and :data:`EXTRA_SECRET_VARS` (ours, such as ``PRB_RM_API_KEY``,
  and names that do not follow the usual pattern);
* every other variable whose name has a part ``KEY``, ``APIKEY``, ``TOKEN``, ``SECRET``,
  ``PASSWORD``, ``PASSWD``, ``CREDENTIAL(S)`` or ``PAT`` (``MY_API_KEY``,
  ``HF_TOKEN``, ``AZURE_CLIENT_SECRET``, ``WATSONX_ZENAPIKEY``, ...), which covers the
  keys litellm reads for its ~100 providers (a test checks this against litellm's
  own source) and the variable named by ``api_key_env``;
* every value this process *sends* as a credential (:func:`register_secret`: each
  client registers the key it puts into a header or a call before sending anything),
  whatever variable, config or argument it came from -- so ``api_key_env=MYJUDGE``
  is hidden although ``MYJUDGE`` does not look like a key's name;
* plus any extra value a caller passes;
* and, in any text, the value of a URL query parameter whose name looks like a
  credential's (``?key=...``, ``&api_key=...``, ``&access_token=...``, ``&sig=...``:
  :func:`is_secret_query_name`), written as ``?key=***``: a server that takes its key in
  the URL (Gemini's ``?key=``, Azure's SAS ``&sig=``) puts it into ``api_base``, which
  lm-eval logs and writes into results files (:func:`register_url_secrets` also hides the
  value itself wherever else it turns up).

Values shorter than :data:`MIN_SECRET_LENGTH` characters are left alone: they are not
keys, and replacing e.g. ``true`` everywhere would mangle messages.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

REDACTED = "***"
MIN_SECRET_LENGTH = 8

# litellm provider -> the variables its key is read from (first one named in messages).
PROVIDER_KEY_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "text-completion-openai": ("OPENAI_API_KEY",),
    "hosted_vllm": ("HOSTED_VLLM_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "palm": ("PALM_API_KEY",),
    "vertex_ai": ("VERTEXAI_CREDENTIALS", "VERTEX_CREDENTIALS", "GOOGLE_APPLICATION_CREDENTIALS"),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN"),
    "azure_ai": ("AZURE_AI_API_KEY",),
    "bedrock": ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"),
    "mistral": ("MISTRAL_API_KEY",),
    "codestral": ("CODESTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "cohere_chat": ("COHERE_API_KEY", "CO_API_KEY"),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY", "FIREWORKS_AI_TOKEN"),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "sambanova": ("SAMBANOVA_API_KEY",),
    "nvidia_nim": ("NVIDIA_NIM_API_KEY",),
    "huggingface": ("HF_TOKEN", "HUGGINGFACE_API_KEY"),
    "replicate": ("REPLICATE_API_KEY", "REPLICATE_API_TOKEN"),
    "databricks": ("DATABRICKS_API_KEY",),
    "watsonx": ("WATSONX_APIKEY", "WATSONX_API_KEY", "WATSONX_TOKEN", "WATSONX_ZENAPIKEY", "WX_API_KEY"),
    "cloudflare": ("CLOUDFLARE_API_KEY",),
    "ai21": ("AI21_API_KEY",),
    "anyscale": ("ANYSCALE_API_KEY",),
    "dashscope": ("DASHSCOPE_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "novita": ("NOVITA_API_KEY",),
    "nebius": ("NEBIUS_API_KEY",),
    "ollama": ("OLLAMA_API_KEY",),
    "ollama_chat": ("OLLAMA_API_KEY",),
    "lm_studio": ("LM_STUDIO_API_KEY",),
    "llamafile": ("LLAMAFILE_API_KEY",),
    "github": ("GITHUB_API_KEY",),
    "friendliai": ("FRIENDLIAI_API_KEY", "FRIENDLI_TOKEN"),
    "predibase": ("PREDIBASE_API_KEY",),
    "volcengine": ("VOLCENGINE_API_KEY", "ARK_API_KEY"),
    "vercel_ai_gateway": ("VERCEL_AI_GATEWAY_API_KEY",),
    "litellm_proxy": ("LITELLM_PROXY_API_KEY",),
}

# Ours, and credential variables whose names do not match the pattern below.
EXTRA_SECRET_VARS: tuple[str, ...] = (
    "PRB_RM_API_KEY",
    "AIMLAPI_KEY",
    "HCP_VAULT_APPROLE_SECRET_ID",
    "AWS_ACCESS_KEY_ID",
)

# Values sent as credentials by this process (see register_secret); only ever grows.
_SENT: set[str] = set()

_SECRET_PARTS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS",
                          "PAT"})


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name is treated as holding a credential."""
    upper = name.upper()
    if upper in EXTRA_SECRET_VARS or any(upper in names for names in PROVIDER_KEY_VARS.values()):
        return True
    parts = [p for p in re.split(r"[^A-Z0-9]+", upper) if p]
    return any(p in _SECRET_PARTS or p.endswith("APIKEY") for p in parts)


#: Query parameter names that carry a credential without looking like a variable's name
#: (Azure's shared-access signature ``sig``, ``auth``); compared lower-cased.
_QUERY_SECRET_NAMES = frozenset({"sig", "signature", "auth", "code"})

# ``?name=value`` or ``&name=value`` in any text; the value ends where a URL, a
# ``k=v,k=v`` argument string, JSON or a log line would end it.
_QUERY_PAIR = re.compile(r"(?P<lead>[?&;](?P<name>[A-Za-z0-9_.\-]{1,64})=)(?P<value>[^&#\s'\",;<>()\[\]{}]+)")


def is_secret_query_name(name: str) -> bool:
    """Whether a URL query parameter of this name is treated as carrying a credential.

    Args:
        name: the parameter's name as written (``key``, ``api-key``, ``sig``...).
    """
    return is_secret_name(name) or name.lower() in _QUERY_SECRET_NAMES


def register_url_secrets(url: object) -> tuple[str, ...]:
    """Register the values of a URL's key-like query parameters as secrets (:func:`register_secret`).

    Call it with every server address a user gives (``api_base=``, ``endpoint=``) before
    anything prints it: the value is then hidden in every form prb prints, decoded
    (``%2B`` as ``+``) or not. Anything that is not a URL with a query is ignored.

    Args:
        url: the address as given (any value; only text with ``?`` is looked at).

    Returns:
        The values registered.
    """
    if not isinstance(url, str) or "?" not in url:
        return ()
    try:
        query = urlsplit(url.strip()).query
    except ValueError:  # a malformed URL (bad port, brackets): its text is still masked by redact()
        return ()
    raw = [value for name, value in (part.partition("=")[::2] for part in query.split("&"))
           if value and is_secret_query_name(name)]
    decoded = [value for name, value in parse_qsl(query, keep_blank_values=False) if is_secret_query_name(name)]
    return register_secret(*raw, *decoded)


def _mask_query_value(match: re.Match[str]) -> str:
    if not is_secret_query_name(match["name"]) or match["value"] == REDACTED:
        return match[0]
    return match["lead"] + REDACTED


def provider_key_vars(model: str) -> tuple[str, ...]:
    """Variables litellm reads the key of ``model`` (``provider/name``) from; empty if unknown."""
    provider = model.split("/", 1)[0] if "/" in model else ""
    return PROVIDER_KEY_VARS.get(provider, ())


def register_secret(*values: str | None) -> tuple[str, ...]:
    """Remember credentials this process sends, so they are redacted everywhere from now on.

    Call it with every key a client puts into a request, before the first request goes
    out: a server that echoes the key then cannot get it into a reply, an error, the
    cache, a sample or a report, whatever the variable holding it is called.

    Args:
        values: the keys (None and values shorter than 4 characters are ignored: too
            short to be keys, and hiding them would mangle ordinary text).

    Returns:
        The registered values (for a client's own error messages).
    """
    kept = tuple(v for v in values if v and len(v) >= 4)
    _SENT.update(kept)
    return kept


def secret_values(environ: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """Credential values to hide: from the environment, plus ``extra``; longest first.

    Args:
        environ: variables to look at (default: ``os.environ``, as it is now).
        extra: more values known to be secret (kept even when short).
    """
    if environ is None:
        values = set(_environment_secrets(_environ_snapshot()))
    else:
        values = {v for name, v in environ.items() if v and len(v) >= MIN_SECRET_LENGTH and is_secret_name(name)}
    # A value we are told is a key, or that we send as one, is hidden even when short.
    values.update(v for v in extra if v and len(v) >= 4)
    values.update(_SENT)
    # URL-encoded forms too: a key in a query string (Gemini's ``?key=``) may be escaped.
    values.update(quote(v, safe="") for v in list(values))
    return tuple(sorted(values, key=lambda v: (-len(v), v)))


def _environ_snapshot() -> tuple[tuple[Any, Any], ...]:
    """The environment as it is now, cheaply (decoding ``os.environ`` costs ~40 us a time)."""
    raw = getattr(os.environ, "_data", None)
    return tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())


@lru_cache(maxsize=4)
def _environment_secrets(snapshot: tuple[tuple[Any, Any], ...]) -> frozenset[str]:
    """Secret values in an environment snapshot (recomputed only when the environment changes)."""

    def text(value: Any) -> str:
        return os.fsdecode(value) if isinstance(value, bytes) else str(value)

    pairs = ((text(name), text(value)) for name, value in snapshot)
    return frozenset(v for name, v in pairs if v and len(v) >= MIN_SECRET_LENGTH and is_secret_name(name))


@lru_cache(maxsize=8)
def _pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(re.escape(v) for v in values)) if values else None


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every credential value replaced by ``***``.

    Args:
        text: anything about to be written or printed.
        extra: more secret values (e.g. the key being sent).
    """
    if not text:
        return text
    pattern = _pattern(secret_values(extra=tuple(extra)))
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    if "=" in text and ("?" in text or "&" in text or ";" in text):
        text = _QUERY_PAIR.sub(_mask_query_value, text)
    return text


_LOG_FACTORIES: set[Any] = set()  # record factories installed here (install_log_redaction is idempotent)


def install_log_redaction() -> None:
    """Pass every log record's message through :func:`redact`, whichever handler prints it.

    lm-eval logs ``--model_args`` verbatim (``Initializing prb-judge model, with arguments:
    {...}``), and its handlers are its own; a record factory is the one place every record
    passes before any handler sees it. Calling this again does nothing.
    """
    previous = logging.getLogRecordFactory()
    if previous in _LOG_FACTORIES:
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError, KeyError):  # a bad format string: logging reports it when it formats
            return record
        hidden = redact(message)
        if hidden != message:
            record.msg, record.args = hidden, ()
        return record

    _LOG_FACTORIES.add(factory)
    logging.setLogRecordFactory(factory)


def redact_data(data: Any) -> Any:
    """A JSON-ready value with :func:`redact` applied to every string in it (keys included)."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {redact_data(k): redact_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(v) for v in data]
    return data

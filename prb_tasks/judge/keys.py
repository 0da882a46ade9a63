"""Which API key a judge sends, and which variable holds it.

Keys are read from the environment only (never from model_args, which lm-eval writes
into results files), kept in memory, and redacted from everything written
(:mod:`prb_tasks.common.redact`). A key that is plainly missing (the variable named by
``api_key_env``, or every variable of a provider prb knows, unset) is found when the
judge is made, before any data is loaded (:func:`missing_key_line`, no litellm needed).
The full check needs litellm (~2 s to import), so :func:`resolve_key` runs only when a
request is about to be sent -- a fully cached re-run never pays for it -- but still
before the first one.
"""

from __future__ import annotations

import os

from prb_tasks.common.redact import provider_key_vars
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.judge.options import OPENAI_COMPATIBLE_PREFIXES, JudgeSettings

# A key litellm needs for an OpenAI-compatible server that does not check keys.
PLACEHOLDER_KEY = "sk-no-key-required"


def _local_openai_env(settings: JudgeSettings) -> str | None:
    """The key variable of an OpenAI-compatible server at ``api_base`` (None: not one)."""
    if not settings.api_base or not settings.model_id.startswith(OPENAI_COMPATIBLE_PREFIXES):
        return None
    return "HOSTED_VLLM_API_KEY" if settings.model_id.startswith("hosted_vllm/") else "OPENAI_API_KEY"


def key_variable(settings: JudgeSettings) -> str:
    """How to name, in a message, the variable the key comes from."""
    if settings.api_key_env:
        return settings.api_key_env
    local = _local_openai_env(settings)
    if local:
        if local in os.environ:
            return local
        return f"{local} (not set: the server wants a key; export it or pass api_key_env=NAME)"
    names = provider_key_vars(settings.model_id)
    if names:
        return " / ".join(names)
    return "the provider's API key variable (or pass api_key_env=NAME)"


#: Providers whose credentials may come from elsewhere than a variable (files, roles, AD
#: tokens): not checked at start-up, litellm's own check runs before the first request.
_CREDENTIALS_ELSEWHERE = ("vertex_ai", "bedrock", "sagemaker", "azure")


def missing_key_line(settings: JudgeSettings) -> str | None:
    """The one line for a key that is plainly not there, or None (present, not needed,
    or only litellm can tell). Cheap: reads the environment only.

    Args:
        settings: the judge's settings.
    """
    if settings.api_key_env or settings.dry_run:
        return None  # resolve_settings refuses an unset api_key_env; a dry run sends nothing
    if _local_openai_env(settings) is not None:
        return None  # a local OpenAI-compatible server: usually checks no key
    provider = settings.model_id.split("/", 1)[0] if "/" in settings.model_id else ""
    names = provider_key_vars(settings.model_id)
    if not names or provider in _CREDENTIALS_ELSEWHERE or any(os.environ.get(n) for n in names):
        return None
    return (f"prb-judge: {settings.model_id} needs {' or '.join(names)} in the environment (or api_key_env=NAME "
            "naming the variable that holds the key); export it and run again (nothing was sent; a re-run "
            "answered wholly from the cache needs it set too)")


def resolve_key(settings: JudgeSettings, direct: bool) -> str | None:
    """The key to send explicitly, or None to let litellm read the provider's variable.

    Args:
        settings: the judge's settings.
        direct: calls go to an OpenAI-compatible server without litellm.

    Raises:
        JudgeConfigError: the provider needs a key and none is set.
    """
    if settings.api_key_env:
        return os.environ[settings.api_key_env]
    local = _local_openai_env(settings)
    if local:
        # litellm's OpenAI client refuses to start without some key (and then reports
        # a misleading server error), while local servers usually check none.
        return os.environ.get(local) or (None if direct else PLACEHOLDER_KEY)
    from prb_tasks.judge.client import import_litellm

    litellm = import_litellm()
    try:
        env = litellm.validate_environment(model=settings.model_id, api_base=settings.api_base)
    except Exception:  # noqa: BLE001 - unknown providers: let the first call tell
        return None
    missing = [k for k in env.get("missing_keys", []) if "KEY" in k or "TOKEN" in k or "CREDENTIALS" in k]
    if missing:
        raise JudgeConfigError(
            f"prb-judge: {settings.model_id} needs {' or '.join(missing)} in the environment "
            "(or api_key_env=NAME naming the variable that holds the key)"
        )
    return None

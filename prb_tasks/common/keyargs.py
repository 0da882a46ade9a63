"""Refuse API keys written into model arguments or config files.

lm-eval writes ``--model_args`` into results files and logs them at start-up
(``Initializing <model> model, with arguments: {...}``), so a key given there would end
up in CI logs and shared results. Keys come from the environment instead; this module
recognises the argument names a key would be passed under and refuses them with one
line -- early enough (``prb eval`` checks before handing over to lm-eval) that the value
is never printed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from prb_tasks.common.errors import PRBError
from prb_tasks.common.redact import register_secret

#: Argument names that would carry a key's value (compared case-insensitively).
KEY_ARGUMENTS = frozenset({"api_key", "key", "apikey", "api_token", "token", "access_token", "secret"})

#: Where each of prb's models takes its key from, said in the refusal.
KEY_SOURCE = {
    "prb-judge": "export it and pass api_key_env=NAME instead",
    "prb-rm": "export it as PRB_RM_API_KEY instead (sent to endpoint= as a bearer token)",
}


def key_arguments(args: Mapping[str, Any]) -> list[str]:
    """Names in ``args`` that would carry a key, in the given order."""
    return [name for name in args if str(name).lower() in KEY_ARGUMENTS]


def refuse_key_arguments(args: Mapping[str, Any], where: str, instead: str,
                         error: type[PRBError] = PRBError) -> None:
    """Raise one line if ``args`` passes a key; its value is registered as a secret first.

    Args:
        args: model arguments or a config mapping.
        where: how to name the source in the message (``prb-judge: model_args``).
        instead: what to do instead (one of :data:`KEY_SOURCE`).
        error: the :class:`PRBError` subclass to raise.
    """
    names = key_arguments(args)
    if not names:
        return
    # Hidden from anything prb prints from now on, in case something quotes it.
    register_secret(*(str(args[name]) for name in names if args[name] is not None))
    raise error(f"{where}: do not pass an API key here ({', '.join(names)}; lm-eval writes model_args "
                f"into results files and logs); {instead}")


def has_url_credentials(value: Any) -> bool:
    """Whether ``value`` is a URL carrying a user name or password (``http://user:pass@host/``)."""
    if not isinstance(value, str) or "@" not in value or "://" not in value:
        return False
    try:
        parts = urlsplit(value.strip())
        return bool(parts.scheme) and (parts.username is not None or parts.password is not None)
    except ValueError:  # a malformed URL (bad port, brackets): not ours to judge here
        return False


def url_credential_line(name: str, where: str, instead: str) -> str:
    """The one-line refusal of a URL with credentials in ``name`` (never quoting the URL).

    Args:
        name: the argument or setting holding the URL.
        where: how to name the source (``prb eval: --model_args``).
        instead: where the key goes instead.
    """
    return (f"{where}: {name} has a user name or password in it (http://USER:PASSWORD@host/...), which lm-eval "
            f"would print and write into results files; give the URL without them, and for the key, {instead}")


def refuse_url_credentials(args: Mapping[str, Any], where: str, instead: str,
                           error: type[PRBError] = PRBError) -> None:
    """Raise one line if a value in ``args`` is a URL with credentials; they are registered
    as secrets first, so nothing prb prints afterwards shows them.

    Args:
        args: model arguments or a config mapping.
        where: how to name the source in the message.
        instead: where the key goes instead.
        error: the :class:`PRBError` subclass to raise.
    """
    for name, value in args.items():
        if has_url_credentials(value):
            parts = urlsplit(str(value).strip())
            register_secret(*(v for v in (parts.password, f"{parts.username}:{parts.password}") if v))
            raise error(url_credential_line(str(name), where, instead))

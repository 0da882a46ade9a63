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

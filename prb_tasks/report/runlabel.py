"""Name a run by everything that changes its result.

Two runs of ``prb-rm pretrained=./tinyrm`` with ``protocol=official`` and
``protocol=clean`` score differently, so their labels (in ``prb compare``, in the
summary ``prb eval`` prints) and their output folders must differ. A model argument
belongs in the name unless it only changes *how* the run went (concurrency, caching,
retries, prices, where the key is read from), or it is a secret, or it repeats the
backend's default. The server a run talked to (``api_base``, lm-eval's ``base_url``:
host, port and path, without credentials) and the generation settings given with
``--gen_kwargs`` (``max_gen_toks``, ``temperature``...) change what comes back, so they
are in the name too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from prb_tasks.common.redact import is_secret_name, redact

#: Arguments that change how a run goes but never a score or a verdict.
OPERATIONAL = frozenset({
    "api_key_env", "api_path", "transport", "num_concurrent", "rpm", "tpm", "max_retries", "timeout",
    "backoff_base", "backoff_max", "max_wait", "cache", "cache_dir", "input_cost_per_mtok", "output_cost_per_mtok",
    "cached_input_cost_per_mtok",
    "max_cost", "dry_run", "batch", "batch_wait", "batch_poll", "batch_max_requests", "batch_retries",
    "batch_size", "max_batch_size", "device", "trust_remote_code", "parallelize", "max_length_warning",
    "tokenized_requests", "max_gen_toks_warning", "verify_certificate", "description",
    # They bound how long a run may wait or stop it; they never change an answer that was given.
    "stop_after_timeouts", "stop_after_silence", "method_time_limit",
})
#: Arguments that name the model itself: shown first, in this order.
IDENTITY = ("config", "model", "pretrained", "scorer", "endpoint", "served_model", "peft", "delta", "path", "engine")
#: Arguments holding a server's address: shown as host:port/path.
_URLS = ("api_base", "base_url")


def as_dict(model_args: str | dict[str, Any] | None) -> dict[str, Any]:
    """``--model_args`` as a dict (lm-eval records them either way).

    Args:
        model_args: a dict, a ``k=v,...`` string, or None.
    """
    if isinstance(model_args, dict):
        return dict(model_args)
    if not model_args:
        return {}
    return dict(part.split("=", 1) for part in str(model_args).split(",") if "=" in part)


@lru_cache(maxsize=4)
def _defaults(model: str) -> dict[str, Any]:
    """The default of every argument of prb's own backends (none for lm-eval's)."""
    try:
        fields: dict[str, Any]
        if model == "prb-rm":
            from prb_tasks.rm.options import RMOptions

            fields = RMOptions.model_fields
        elif model == "prb-judge":
            from prb_tasks.judge.options import JudgeSettings

            fields = JudgeSettings.model_fields
        else:
            return {}
    except ImportError:
        return {}
    return {name: f.default for name, f in fields.items()}


def _same(value: Any, default: Any) -> bool:
    return str(value).lower() == str(default).lower() if default is not None else False


def short_url(url: str) -> str:
    """``host:port/path`` of a server address: no scheme, no credentials (a key-like query
    value shows as ``?key=***``), no trailing slash."""
    text = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", str(url).strip())
    host, slash, path = text.partition("/")
    return redact(host.rpartition("@")[2] + slash + path).rstrip("/")


def result_args(model: str, model_args: str | dict[str, Any] | None,
                gen_kwargs: str | dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """The (key, value) pairs that set what this run computes, identity keys first.

    Args:
        model: the ``--model`` name (``prb-rm``, ``prb-judge``, ``hf``...).
        model_args: its ``--model_args``.
        gen_kwargs: its ``--gen_kwargs`` (lm-eval records them in the results' config), added
            after the model arguments (a model argument of the same name wins).
    """
    args = as_dict(model_args)
    defaults = _defaults(model)
    kept = {k: v for k, v in args.items()
            if k not in OPERATIONAL and v not in (None, "") and not is_secret_name(k)
            and not (k in defaults and _same(v, defaults[k]))}
    kept.update({k: short_url(v) for k, v in kept.items() if k in _URLS})
    generation = {k: v for k, v in as_dict(gen_kwargs).items() if k not in kept and v not in (None, "")}
    order = [k for k in IDENTITY if k in kept] + sorted(k for k in kept if k not in IDENTITY)
    return [(k, str(kept[k])) for k in order] + [(k, str(generation[k])) for k in sorted(generation)]


def run_label(model: str, model_args: str | dict[str, Any] | None,
              gen_kwargs: str | dict[str, Any] | None = None) -> str:
    """``prb-rm (pretrained=./tinyrm, protocol=official)``: the model and what sets its result.

    Args:
        model: the ``--model`` name.
        model_args: its ``--model_args``.
        gen_kwargs: its ``--gen_kwargs``.
    """
    shown = result_args(model, model_args, gen_kwargs)
    return f"{model} ({', '.join(f'{k}={v}' for k, v in shown)})" if shown else model


def folder_suffix(model: str, model_args: str | dict[str, Any] | None,
                  gen_kwargs: str | dict[str, Any] | None = None) -> str:
    """``__protocol-official`` for the result-changing arguments besides the model's identity;
    empty when there are none, so a plain run keeps its plain folder name.

    Args:
        model: the ``--model`` name.
        model_args: its ``--model_args``.
        gen_kwargs: its ``--gen_kwargs``.
    """
    # Not the server: runs against two servers keep one folder (their results files are
    # stamped apart, and their labels differ), so plans and re-runs are found where they were.
    extra = [(k, v) for k, v in result_args(model, model_args, gen_kwargs) if k not in IDENTITY and k not in _URLS]
    text = "__".join(f"{k}-{v}" for k, v in extra)
    return "__" + re.sub(r"[^A-Za-z0-9._=-]+", "_", text)[:120] if text else ""

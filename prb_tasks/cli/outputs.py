"""Name the output subfolder after what ran.

lm-eval writes results under ``--output_path/<name>/``, where ``<name>`` is the
value of the first of ``peft``, ``delta``, ``pretrained``, ``model``, ``path`` or
``engine`` in ``--model_args`` with ``/`` and similar characters turned into ``__``,
or 8 random characters when there is none. That makes ``prb-rm`` baselines
(``scorer=bm25``) land in ``2cwrw4i0/`` and a local RM (``pretrained=./x``) in the
hidden folder ``.__x/``. :func:`folder_name` gives those runs a name a user can
find; everything else keeps lm-eval's name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_NAME_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def _as_dict(model_args: str | dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(model_args, dict):
        return model_args
    if not model_args:
        return {}
    return dict(part.split("=", 1) for part in str(model_args).split(",") if "=" in part)


def _is_local_path(value: str) -> bool:
    return value.startswith((".", "/", "~")) or Path(value).expanduser().is_dir()


def _leaf(value: str) -> str:
    return Path(value.rstrip("/\\")).expanduser().resolve().name or "model"


def _safe(name: str) -> str:
    # Same rule as lm-eval's sanitize_model_name, so names stay comparable.
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def folder_name(model: str, model_args: str | dict[str, Any] | None,
                gen_kwargs: str | dict[str, Any] | None = None) -> str | None:
    """The folder name for this run, or None to keep lm-eval's own.

    The name of what ran, followed by every other argument that changes the result
    (``prb-rm__tinyrm__protocol-official``), so runs that differ only in such an
    argument never share a folder.

    Args:
        model: the ``--model`` name.
        model_args: the ``--model_args`` (dict or ``k=v,...`` string).
        gen_kwargs: the ``--gen_kwargs`` (``max_gen_toks=64``...).
    """
    from prb_tasks.report.runlabel import folder_suffix

    suffix = folder_suffix(model, model_args, gen_kwargs)
    base = _base_name(model, model_args)
    if not suffix:
        return base
    if base is None:
        args = _as_dict(model_args)
        named = next((str(args[k]) for k in _NAME_KEYS if args.get(k) not in (None, "")), None)
        base = _safe(named) if named is not None else _safe(model)
    return base + suffix


def _base_name(model: str, model_args: str | dict[str, Any] | None) -> str | None:
    """The folder named after what ran (no arguments), or None for lm-eval's own name."""
    args = _as_dict(model_args)
    named = next((str(args[k]) for k in _NAME_KEYS if args.get(k) not in (None, "")), None)
    if model == "prb-rm":
        if named is not None and _is_local_path(named):
            return _safe(f"prb-rm__{_leaf(named)}")
        if named is not None:
            return None  # a hub id: lm-eval's org__name is already clear
        if args.get("endpoint"):
            served = args.get("served_model") or re.sub(r"^\w+://", "", str(args["endpoint"])).split("/")[0]
            return _safe(f"prb-rm__{served}")
        return _safe(f"prb-rm__{args.get('scorer') or 'length'}")
    if model == "prb-judge" and named is None and args.get("config"):
        return _safe(_judge_config_model(str(args["config"])))
    if named is not None and _is_local_path(named):
        return _safe(f"{model}__{_leaf(named)}")
    return None


def _judge_config_model(ref: str) -> str:
    """The model a judge config names (so ``config=x`` runs sit beside ``model=`` runs)."""
    try:
        from prb_tasks.judge.configs import load_config

        model = load_config(ref).get("model")
    except Exception:  # noqa: BLE001 - a broken config is reported by the judge itself, with a better message
        model = None
    return str(model) if model else f"prb-judge__{Path(ref).stem}"


_GEN_KWARGS: list[Any] = [None]


def install(gen_kwargs: str | dict[str, Any] | None = None) -> None:
    """Make lm-eval's results tracker use :func:`folder_name` (once per process).

    Args:
        gen_kwargs: this run's ``--gen_kwargs`` (the tracker is not told them), named in the folder.
    """
    _GEN_KWARGS[0] = gen_kwargs
    from lm_eval.loggers.evaluation_tracker import GeneralConfigTracker
    from lm_eval.utils import sanitize_model_name

    original = GeneralConfigTracker.log_experiment_args
    if getattr(original, "_prb_named", False):
        return

    def log_experiment_args(self, model_source, model_args, *args, **kwargs):
        original(self, model_source, model_args, *args, **kwargs)
        name = folder_name(str(model_source), model_args, _GEN_KWARGS[0])
        if name:
            self.model_name = name
            self.model_name_sanitized = sanitize_model_name(name)

    log_experiment_args._prb_named = True  # type: ignore[attr-defined]
    GeneralConfigTracker.log_experiment_args = log_experiment_args

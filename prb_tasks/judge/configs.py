"""Judge configs: small YAML files naming a model and its settings.

:func:`resolve_settings` merges ``--model_args`` over the config they name.

``config=<name>`` looks in the bundled ``configs/`` folder
(:func:`prb_tasks.common.resources.configs_dir`); ``config=<path>`` reads any YAML file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prb_tasks.common.suggest import did_you_mean
from prb_tasks.common.textfiles import read_text, too_deep
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.judge.options import (
    HARNESS_KEYS,
    JudgeSettings,
    ModelArgs,
    describe_error,
    parse_config_file,
    reject_raw_key,
)


def list_configs() -> dict[str, Path]:
    """Bundled configs by name (file stem)."""
    from prb_tasks.common.resources import configs_dir

    try:
        folder = configs_dir()
    except FileNotFoundError:
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def _find(ref: str) -> Path:
    path = Path(ref).expanduser()
    if path.suffix in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            raise JudgeConfigError(f"prb-judge: judge config file {ref} does not exist")
        return path
    bundled = list_configs()
    if ref in bundled:
        return bundled[ref]
    raise JudgeConfigError(
        f"prb-judge: unknown judge config '{ref}'{did_you_mean(ref, bundled)}; "
        f"bundled configs: {', '.join(sorted(bundled)) or 'none'} "
        "(or pass a path to a .yaml file)"
    )


def load_config(ref: str) -> dict[str, Any]:
    """The settings a config sets, validated.

    Args:
        ref: bundled config name (e.g. ``gpt-4o-mini``) or path to a YAML file.
    """
    import yaml

    path = _find(ref)
    try:
        raw = yaml.safe_load(read_text(path, "judge config", JudgeConfigError))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise JudgeConfigError(f"prb-judge: judge config {path.name} is not valid YAML{where}") from None
    except RecursionError:
        raise JudgeConfigError(f"prb-judge: {too_deep(f'judge config {path}')}") from None
    return parse_config_file(raw, f"config {path.name}")


def resolve_settings(model_args: dict[str, Any]) -> JudgeSettings:
    """Validate ``--model_args``, load the config it names, and merge (model_args win).

    Args:
        model_args: keyword arguments lm-eval passed to the model.
    """
    reject_raw_key(model_args, "model_args")
    try:
        args = ModelArgs(**model_args)
    except ValidationError as exc:
        raise JudgeConfigError(describe_error(exc, "model_args", set(ModelArgs.model_fields))) from None
    merged: dict[str, Any] = load_config(args.config) if args.config else {}
    own = args.model_dump(exclude_unset=True)
    for key in ("config", *HARNESS_KEYS):
        own.pop(key, None)
    merged.update(own)
    try:
        settings = JudgeSettings(**merged)
    except ValidationError as exc:
        raise JudgeConfigError(describe_error(exc, "model_args", set(ModelArgs.model_fields))) from None
    if not settings.model:
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

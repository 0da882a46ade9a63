"""Find a method by name: the shipped baselines, then the ``prb_tasks.methods`` entry points.

A third-party package registers its method class in its own ``pyproject.toml``::

    [project.entry-points."prb_tasks.methods"]
    my_method = "my_package.module:MyMethod"

and is then run with ``--model prb-method --model_args method=my_method``. A class that
is not packaged yet can be named by its import path, ``method=my_module:MyMethod``
(``my_module`` importable, e.g. with ``PYTHONPATH=.``).
"""

from __future__ import annotations

import importlib
import inspect
from importlib.metadata import entry_points
from typing import Any

from prb_tasks.common.suggest import did_you_mean
from prb_tasks.fewshot.method import Method, MethodError

ENTRY_POINT_GROUP = "prb_tasks.methods"

#: Shipped methods that live in a package built on this one, named by import path (as
#: ``prb_tasks.plugin.MODELS`` names the models): ``prb_tasks.train`` subclasses the Method
#: interface here, so importing it from here would tie the two packages in a circle.
SHIPPED_ABOVE = {"trained": "prb_tasks.train.method:TrainedMethod"}


def builtin_methods() -> dict[str, type[Method]]:
    """The baselines shipped with prb, by name."""
    from prb_tasks.fewshot.baselines import BASELINES

    # Each module imports torch only when a checkpoint loads.
    above = {name: getattr(importlib.import_module(target.partition(":")[0]), target.partition(":")[2])
             for name, target in SHIPPED_ABOVE.items()}
    return {**BASELINES, **above}


def _entry_point_methods() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    """Every method name that resolves here (shipped first, then installed packages')."""
    shipped = builtin_methods()
    return list(shipped) + sorted(n for n in _entry_point_methods() if n not in shipped)


def resolve(name: str) -> type[Method]:
    """The method class registered as ``name``.

    Args:
        name: a shipped baseline or an entry-point name in :data:`ENTRY_POINT_GROUP`.
    """
    shipped = builtin_methods()
    if name in shipped:
        return shipped[name]
    if ":" in name:
        return _checked(f"method '{name}'", _import_path(name))
    found = _entry_point_methods().get(name)
    if found is None:
        raise MethodError(f"prb-method: unknown method '{name}'{did_you_mean(name, available())}; available: "
                          f"{', '.join(available())} "
                          f"(a package adds one with an entry point in the '{ENTRY_POINT_GROUP}' group)")
    try:
        cls = found.load()
    except Exception as exc:  # noqa: BLE001 - a broken third-party package: say which one
        raise MethodError(f"prb-method: the entry point '{name}' ({found.value}) could not be loaded: "
                          f"{type(exc).__name__}: {exc}") from None
    return _checked(f"the entry point '{name}' ({found.value})", cls)


def _import_path(path: str) -> object:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MethodError(f"prb-method: cannot import '{module_name}' for method '{path}': {exc} "
                          "(is its folder on PYTHONPATH?)") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise MethodError(f"prb-method: module '{module_name}' has no '{attr}' (method '{path}')") from None


def _checked(label: str, cls: object) -> type[Method]:
    """``cls`` if it is a :class:`Method` subclass; else one line naming ``label``."""
    if not (inspect.isclass(cls) and issubclass(cls, Method)):
        raise MethodError(f"prb-method: {label} is not a subclass of prb_tasks.fewshot.method.Method")
    return cls


def build(name: str, options: dict[str, Any]) -> Method:
    """An instance of method ``name`` with ``options`` (its keyword arguments).

    Args:
        name: see :func:`resolve`.
        options: the remaining ``--model_args`` keys.
    """
    cls = resolve(name)
    params = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unknown = sorted(set(options) - set(params)) if not takes_any else []
    if unknown:
        known = ", ".join(p for p in params if p != "self") or "none"
        raise MethodError(f"prb-method: method '{name}' has no option {', '.join(unknown)}; its options: {known}")
    typed = _typed(name, cls, options)  # its own one line (a MethodError is a ValueError: not wrapped below)
    try:
        return cls(**typed)
    except (TypeError, ValueError) as exc:
        raise MethodError(f"prb-method: method '{name}': {exc}") from None


_KINDS = {int: "a whole number", float: "a number", bool: "true or false"}


def _convert(value: Any, kind: type) -> Any:
    """``value`` (from the command line: often a string) as ``kind``; ValueError if it is not one."""
    if kind is bool:
        text = str(value).strip().lower()
        if text not in ("true", "false", "1", "0"):
            raise ValueError(value)
        return text in ("true", "1")
    number = float(value)
    if kind is int:
        if not number.is_integer():
            raise ValueError(value)
        return int(number)
    return number


def _typed(name: str, cls: type[Method], options: dict[str, Any]) -> dict[str, Any]:
    """``options`` converted to the types the method's ``__init__`` annotates (int, float, bool).

    A value that does not convert is one line naming the option.
    """
    import typing

    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # noqa: BLE001 - a third-party annotation that does not resolve: pass values as given
        return dict(options)
    out = dict(options)
    for key, value in options.items():
        kind = hints.get(key)
        if kind not in _KINDS:
            continue
        try:
            out[key] = _convert(value, kind)
        except (TypeError, ValueError):
            raise MethodError(f"prb-method: method '{name}' option {key}={value}: expected {_KINDS[kind]}") from None
    return out

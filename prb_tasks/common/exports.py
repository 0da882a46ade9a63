"""Lazy re-exports for a package's ``__init__`` (PEP 562).

A package lists its public names in ``__all__`` and imports them for type checkers under
``TYPE_CHECKING``; at run time :func:`lazy_exports` imports the defining module only when
a name is first read, so ``import prb_tasks.judge`` stays as cheap as before (lm-eval's
start-up and ``prb --help`` import these packages).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """Build a module-level ``__getattr__`` that imports each public name on first use.

    Args:
        package: the package's ``__name__``, named in the error for an unknown attribute.
        modules: each defining module's dotted name, mapped to the names it provides.

    Returns:
        The function to assign to the package's ``__getattr__``; it caches each name in
        the package's namespace once imported.
    """
    source = {name: module for module, names in modules.items() for name in names}

    def lazy_getattr(name: str) -> Any:
        module = source.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        importlib.import_module(package).__dict__[name] = value
        return value

    return lazy_getattr

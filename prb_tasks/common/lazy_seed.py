"""Seed torch when torch is first imported, instead of importing it to seed it.

lm-eval seeds torch at the start of every run, and importing torch to do so costs about
two seconds and 200 MB before the first request, in runs whose model never touches torch
(``prb-judge``, lm-eval's API backends, the lexical RM baselines). :func:`install`
replaces that step: if torch is already imported it is seeded at once, as before;
otherwise the seed is applied the moment torch is imported, before any code can use it.
A run that never imports torch skips the cost; one that does gets the same seed.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

_pending: list[int] = []


class _SeedingLoader(importlib.abc.Loader):
    """Runs torch's own loader, then seeds the fresh module."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        if _pending:
            module.manual_seed(_pending[-1])
            _pending.clear()

    def __getattr__(self, name: str) -> Any:  # resource readers and the like
        return getattr(self._inner, name)


class _SeedOnImport(importlib.abc.MetaPathFinder):
    """Finds torch with the other finders and wraps its loader (once)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != "torch" or not _pending:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _SeedingLoader(spec.loader)
        return spec


def _seed_later(seed: int) -> None:
    """lm-eval's ``set_torch_seed``, deferred to torch's import when it is not imported yet."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
        return
    if importlib.util.find_spec("torch") is None:
        return  # as lm-eval: no torch, nothing to seed
    _pending[:] = [seed]
    if not any(isinstance(finder, _SeedOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SeedOnImport())


def install() -> None:
    """Make lm-eval's evaluator seed torch lazily (idempotent)."""
    import lm_eval.evaluator as evaluator

    evaluator.set_torch_seed = _seed_later

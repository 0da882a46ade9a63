"""Seed torch when torch is first imported, instead of importing it to seed it.

lm-eval seeds torch at the start of every run, and importing torch to do so costs about
two seconds and 200 MB before the first request, in runs whose model never touches torch
(``prb-judge``, lm-eval's API backends, the lexical RM baselines). :func:`install`
replaces that step: if torch is already imported it is seeded at once, as before;
otherwise the seed is applied the moment torch is imported, before any code can use it.
A run that never imports torch skips the cost; one that does gets the same seed.

lm-eval also imports torch at the very end of every run, to describe the environment in
the results file (``pretty_env_info``, from torch's ``collect_env``). By then the run holds
all its documents and requests, so those 200 MB land on top of the run's peak. When torch
is not imported yet, :func:`install` has that text computed by a short-lived child
process instead: the same text in the results, without torch in this process.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import subprocess
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
    _start_env_child()  # lm-eval seeds as a run starts: the report is ready by the run's end


_COLLECT_ENV = "torch.utils.collect_env"
_CHILD = "from torch.utils.collect_env import get_pretty_env_info; print(get_pretty_env_info(), end='')"


#: The child computing the report, started when the run starts (None: none running).
_child: subprocess.Popen | None = None


def _start_env_child() -> None:
    """Start computing the report in a child now, beside the run, instead of after it.

    Measured on the 2-core machine (a ``scorer=bm25`` run of the README, idle): the child took
    4.3 s between the run's requests and its table when started at the end (import torch 2.2 s,
    collect_env 0.6 s, interpreter and more); started with the run, it overlaps the run.
    """
    global _child
    if _child is not None and _child.poll() is None:
        return
    _child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True)
    atexit.register(_end_child, _child)


def _end_child(child: subprocess.Popen) -> None:
    """A run that ended before its report (an error, Ctrl-C) leaves no child behind."""
    if child.poll() is None:
        child.kill()
        child.wait()


def _pretty_env_info_in_child() -> str:
    """torch's ``get_pretty_env_info()``, computed in a child process (this one keeps no torch)."""
    global _child
    child, _child = _child, None
    if child is None:
        child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = child.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        _end_child(child)
        raise RuntimeError("collect_env gave no answer within 300 s") from None
    if child.returncode != 0:
        # lm-eval stores the error's text when collecting fails; so do we.
        raise RuntimeError((err.strip().splitlines() or ["collect_env failed"])[-1])
    return out


def _env_info_without_torch(original: Any) -> Any:
    """lm-eval's ``add_env_info`` that asks a child process for torch's part if torch is not imported."""

    def add_env_info(storage: dict[str, Any]) -> None:
        if "torch" in sys.modules or importlib.util.find_spec("torch") is None:
            original(storage)
            return
        # Importing a submodule that is already in sys.modules imports none of its parents.
        stub = ModuleType(_COLLECT_ENV)
        stub.get_pretty_env_info = _pretty_env_info_in_child  # type: ignore[attr-defined]
        sys.modules[_COLLECT_ENV] = stub
        try:
            original(storage)
        finally:
            if sys.modules.get(_COLLECT_ENV) is stub:
                del sys.modules[_COLLECT_ENV]

    add_env_info.prb_wrapped = True  # type: ignore[attr-defined]
    return add_env_info


def install() -> None:
    """Make lm-eval's evaluator seed torch lazily and describe it without importing it (idempotent)."""
    import lm_eval.evaluator as evaluator

    evaluator.set_torch_seed = _seed_later
    if not getattr(evaluator.add_env_info, "prb_wrapped", False):
        evaluator.add_env_info = _env_info_without_torch(evaluator.add_env_info)

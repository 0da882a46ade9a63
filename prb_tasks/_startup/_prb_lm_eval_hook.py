"""prb's start-up hook for plain ``lm_eval`` (run by ``prb_lm_eval_hook.pth``).

lm-eval 0.4 reads no plug-in entry points: it finds tasks only in its own folder or
through ``--include_path``, and models only in its own registry. This module, installed
at the root of site-packages with a one-line ``.pth`` file, puts a small finder first
on ``sys.meta_path``. The finder imports nothing and answers ``None`` for every module
except three of lm-eval's; when one of those has just been executed, it hands the
module to :mod:`prb_tasks.cli.lm_eval_hook`, which adds prb's task folder, registers prb's
models and adds ``prb eval``'s checks and compact table to ``lm_eval run``. Once the
three have been seen the finder removes itself.

``PRB_LM_EVAL_HOOK=0`` in the environment switches it off (nothing is installed).
This file is copied into site-packages, also by an editable install: after editing it,
reinstall.
"""

import os
import sys

#: lm-eval's modules that prb acts on, once each has been executed.
TRIGGERS = ("lm_eval.tasks", "lm_eval.models", "lm_eval._cli.run")


class _Finder:
    """Wraps the loader of lm-eval's trigger modules; declines every other import."""

    def __init__(self):
        self.pending = set(TRIGGERS)

    def find_spec(self, name, path=None, target=None):
        if name not in self.pending:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            # Duck-typed: subclassing importlib.abc.Loader would import it into every Python process.
            spec.loader = _Loader(spec.loader, self)  # type: ignore[assignment]
        return spec

    def done(self, name):
        """``name`` has been imported; leave ``sys.meta_path`` once all have."""
        self.pending.discard(name)
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)


class _Loader:
    """Runs the module's own loader, then prb's action for it."""

    def __init__(self, inner, finder):
        self._inner = inner
        self._finder = finder

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        # Nothing else should see this wrapper once the module exists.
        module.__loader__ = self._inner
        if module.__spec__ is not None:
            module.__spec__.loader = self._inner
        self._inner.exec_module(module)
        self._finder.done(module.__name__)
        try:
            from prb_tasks.cli.lm_eval_hook import on_import

            on_import(module.__name__, module)
        except Exception as exc:  # noqa: BLE001 - lm-eval must still run without prb
            sys.stderr.write(f"prb: could not add prb's tasks and models to lm-eval ({type(exc).__name__}: "
                             f"{exc}); run `prb eval` instead, or set PRB_LM_EVAL_HOOK=0 to silence this\n")

    def __getattr__(self, name):  # get_source, resource readers and the like
        return getattr(self._inner, name)


def install():
    """Put the finder first on ``sys.meta_path`` (once), unless switched off or too late."""
    if os.environ.get("PRB_LM_EVAL_HOOK", "1").strip().lower() in ("0", "false", "no", "off"):
        return
    if any(type(f).__name__ == "_Finder" and type(f).__module__ == __name__ for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())


install()

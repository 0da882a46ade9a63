"""Whether a ``prb eval`` run is under way in this process.

``prb eval`` (:mod:`prb_tasks.cli.evalcmd`) marks its run; the wrapper of ``lm_eval run``
(:mod:`prb_tasks.cli.lm_eval_hook`) asks, so a run prb started is not routed through prb
again. Its own module because the hook also calls into ``evalcmd``: the mark sits below both.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_depth = 0


@contextlib.contextmanager
def prb_eval_running() -> Iterator[None]:
    """Marks a run started by ``prb eval``, so ``lm_eval run``'s wrapper does not route it again."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def inside_prb_eval() -> bool:
    """True while a ``prb eval`` run is under way (:func:`prb_eval_running`)."""
    return _depth > 0

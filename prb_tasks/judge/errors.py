"""Exceptions of the judge backend that end a run with one plain sentence.

They are :class:`prb_tasks.common.errors.PRBError`, which ``prb eval`` prints as a single
line (no traceback): they describe a
mistake the user can fix (a bad argument, a missing key, an unknown model), not a
bug. Messages never contain secrets.
"""

from __future__ import annotations

from prb_tasks.common.errors import PRBError


class JudgeError(PRBError):
    """Base class: the run cannot go on; ``str(exc)`` is the one-line explanation."""


class JudgeConfigError(JudgeError):
    """Bad ``--model_args`` or judge config (raised before any request is sent)."""


class JudgeFatalError(JudgeError):
    """The provider rejected the run as a whole (bad key, unknown model, bad request).

    Raised at the first such answer, so thousands of calls do not fail the same way.
    Answers received before it are already in the cache.
    """


class RunStopped(JudgeError):
    """The run stopped on purpose before any results: a dry run, or batches submitted
    and not waited for (``batch_wait=false``), or batches that ended unfinished.

    ``str(exc)`` says what happened and what to run next. ``prb eval`` prints it and
    exits with status 0; lm-eval writes no results file because the run never got to
    scoring. (Plain ``lm_eval`` does not know this exception: it prints the same
    report, then a traceback, and exits with status 1.)

    Args:
        message: what happened and what to run next.
        exit_code: status ``prb eval`` exits with (0; 130 after Ctrl-C).
    """

    def __init__(self, message: str, exit_code: int = 0) -> None:
        super().__init__(message)
        self.exit_code = exit_code

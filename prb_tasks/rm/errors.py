"""Errors ``prb-rm`` raises for problems the user can fix.

They are :class:`prb_tasks.common.errors.PRBError`, which ``prb eval`` prints as a single
line instead of a traceback. Each message names what went wrong (the model
argument, the endpoint and status, the missing extra).
"""

from __future__ import annotations

from prb_tasks.common.errors import PRBError


class RMError(PRBError):
    """A configuration or runtime problem of a scalar reward model run."""


class ServedRMError(RMError):
    """A request to a served reward model failed for good (retries used up)."""

"""Small helpers shared by every part of prb.

Error types, retries, JSON stores, secret redaction, text-file reading, bundled file
locations, "did you mean" hints, refusing keys in model arguments, and seeding torch lazily.

Nothing here imports from the rest of ``prb_tasks``, so any module may use them.
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.common.errors import PRBError

__all__ = ["PRBError"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.common.errors": ("PRBError",),
})

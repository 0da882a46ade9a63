"""Loading and validating benchmark data.

Shared pieces live here (file readers, the error type, the profile store); each
benchmark family has its own subpackage (``personalized_rb``) with its schema,
reader and sources.
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.data.errors import DataError

__all__ = ["DataError"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.data.errors": ("DataError",),
})

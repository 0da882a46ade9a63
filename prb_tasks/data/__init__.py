"""Loading and validating benchmark data.

Shared pieces live here (file readers, the error type, the profile store); each
benchmark family has its own subpackage (``personalized_rb``) with its schema,
reader and sources, and declares itself once in its ``family.py`` (read through
:mod:`prb_tasks.data.families`, the registry every command uses).
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.data.errors import DataError
    from prb_tasks.data.families import BenchmarkFamily, register, unregister

# The registry's listing functions stay in prb_tasks.data.families: a package attribute
# named `families` would be shadowed by that submodule once it is imported.
__all__ = ["BenchmarkFamily", "DataError", "register", "unregister"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.data.errors": ("DataError",),
    "prb_tasks.data.families": ("BenchmarkFamily", "register", "unregister"),
})

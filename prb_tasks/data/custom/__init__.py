"""Bring-your-own per-user preference data: one JSON object per user.

``schema`` validates a user and their preferences, ``reader`` reads ``.json`` /
``.jsonl`` files with one-line errors, ``sources`` resolves ``data_path`` (or the
bundled ``example.jsonl``).
"""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.data.custom.schema import Preference, UserRecord

__all__ = ["Preference", "UserRecord"]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.data.custom.schema": ("Preference", "UserRecord"),
})

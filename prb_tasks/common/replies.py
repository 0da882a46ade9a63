"""Bound what a server's reply may cost us: its size, and how deeply its JSON nests.

A judge or a served reward model answers with a few kilobytes of JSON. A broken or
hostile server may instead send hundreds of megabytes (each held in memory whole) or
JSON nested 100,000 levels deep (Python's parser then raises ``RecursionError``, which
no caller expects). Both transports read at most :data:`MAX_REPLY_BYTES` and parse with
:func:`loads_reply`, so either becomes one classified failure of that request.
"""

from __future__ import annotations

import json
from typing import Any

#: Far beyond any chat completion or reward reply (a 100k-token answer with log-probs is a
#: few MB); a reply this large is a broken server, and reading on would only fill memory.
MAX_REPLY_BYTES = 32 * 1024**2


class ReplyTooLarge(ValueError):
    """A reply longer than the cap; its message says so in words."""

    def __init__(self, limit: int) -> None:
        size = f"{limit // 1024**2} MiB" if limit >= 1024**2 else f"{limit:,} bytes"
        super().__init__(f"reply larger than {size} (a broken server?); not read further")


class ReplyTooDeep(ValueError):
    """A reply whose JSON nests deeper than Python's parser can follow."""

    def __init__(self) -> None:
        super().__init__("reply is JSON nested thousands of levels deep (a broken server?); not read")


def loads_reply(raw: bytes | str) -> Any:
    """Parse a reply's JSON; nesting too deep raises :class:`ReplyTooDeep` (a ``ValueError``).

    Args:
        raw: the reply's body.
    """
    try:
        return json.loads(raw)
    except RecursionError:
        raise ReplyTooDeep() from None

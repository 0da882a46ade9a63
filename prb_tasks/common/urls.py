"""Join a server's address and an API path, keeping the address's query string last."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def join_path(base: str, path: str) -> str:
    """``base`` with ``path`` appended to its path: ``http://h/v1?key=K`` + ``/chat/completions``
    is ``http://h/v1/chat/completions?key=K`` (a server that takes its key in the query, such
    as Gemini's ``?key=``, still gets it; plain concatenation would bury it in the path).

    Args:
        base: the server address as the user gave it (``api_base=``, ``endpoint=``).
        path: the API path to append, with or without its leading slash.
    """
    tail = "/" + path.lstrip("/") if path else ""
    parts = urlsplit(base)
    if not parts.query and not parts.fragment:
        return base.rstrip("/") + tail
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + tail))

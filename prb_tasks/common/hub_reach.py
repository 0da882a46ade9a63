"""Is the Hugging Face hub reachable? Asked once, cheaply, before any download.

Without a network, ``datasets`` and ``transformers`` retry each request for about half a
minute before they give up. One TCP connection attempt with a short timeout (to the hub,
or to the HTTPS proxy when one is set) answers the same question in milliseconds, so a
run on an offline machine fails at once with advice instead.
"""

from __future__ import annotations

import os
import socket
import threading
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_ENDPOINT = "https://huggingface.co"
_TRUE = {"1", "true", "yes", "on"}


def offline_mode() -> bool:
    """True when the user switched the hub off (``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE``).

    ``datasets`` then reads its local cache only, which is fast; no check is needed.
    """
    return any(os.environ.get(name, "").strip().lower() in _TRUE
               for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def _target() -> tuple[str, int]:
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    url = urlsplit(proxy if proxy else os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT)
    if not url.hostname:
        url = urlsplit(DEFAULT_ENDPOINT)
    default_port = 443 if url.scheme == "https" else 80
    return url.hostname or "huggingface.co", url.port or default_port


@lru_cache(maxsize=1)
def unreachable_reason(timeout: float = 2.0) -> str | None:
    """Why the hub cannot be reached, or None if a connection opens.

    The name lookup runs in a thread, so a resolver that hangs costs at most
    ``timeout`` seconds too. The answer is kept for the rest of the process.

    Args:
        timeout: seconds allowed for the name lookup plus the connection.
    """
    host, port = _target()
    outcome: list[str | None] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                outcome.append(None)
        except OSError as exc:
            outcome.append(f"cannot connect to {host}:{port} ({exc.strerror or type(exc).__name__})")

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        return f"no answer from {host}:{port} within {timeout:g} s"
    return outcome[0]


def hub_model_access(repo: str, filename: str = "config.json") -> tuple[dict[str, bool], str | None]:
    """How to load a hub model here: ``from_pretrained`` options and, when it cannot be
    loaded at all, why.

    With the hub reachable (or ``HF_HUB_OFFLINE`` set) nothing changes. With the hub out of
    reach, a cached model is read from the cache without asking the hub first
    (transformers would retry for about 40 s), and an uncached one gets the reason at once,
    for the caller's one-line error.

    Args:
        repo: the model's hub name (``org/name``).
        filename: a file every snapshot of the model holds, to look up in the cache.
    """
    if offline_mode():
        return {}, None
    reason = unreachable_reason()
    if reason is None:
        return {}, None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = isinstance(try_to_load_from_cache(repo, filename), str)
    except Exception:  # noqa: BLE001 - a malformed repo id: from_pretrained names it
        return {}, None
    if cached:
        return {"local_files_only": True}, None
    return {}, f"the HF hub is out of reach ({reason}) and the model is not in the local cache"


def missing_folder(name: str) -> str | None:
    """Why ``name`` names a local folder that is not there, or None (it exists, or it is a hub id).

    A hub id is ``org/name``; a name that starts with ``/``, ``.`` or ``~``, ends with ``/``, has
    more than two parts, or whose first part is a folder here (``runs/nope`` beside ``runs/``) is
    meant as a folder: asking the hub for it would only wait (up to 20 s) for a not-found.

    Args:
        name: a model as the user gave it (``pretrained=``).
    """
    path = Path(name).expanduser()
    if not name or path.exists():
        return None
    parts = Path(name).parts
    meant_local = (name.startswith(("/", ".", "~")) or name.endswith(("/", os.sep)) or len(parts) > 2
                   or (len(parts) == 2 and Path(parts[0]).expanduser().is_dir()))
    if not meant_local:
        return None
    existing = next((p for p in path.parents if p.is_dir()), None)
    where = f" ({existing} holds no {path.relative_to(existing)})" if existing not in (None, Path(".")) else ""
    return f"no folder {name}{where}"

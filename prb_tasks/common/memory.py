"""Hand memory that Python has freed back to the operating system.

glibc's allocator keeps freed blocks for reuse instead of returning them, so a run's
resident memory stays at the high-water mark of everything it ever held at once, freed
or not. On the full benchmark a profile-aware run had about 270 MB of such freed memory
(rendered prompts hashed and dropped, BM25's per-batch tokens, Arrow's decode buffers)
resident while it judged. :func:`trim` asks the allocator to return it; it is called
between stages (after a subset's documents are built, before judging starts), where
it costs milliseconds. Elsewhere than glibc (macOS, musl, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def trim() -> bool:
    """Return freed heap memory to the system; True if the allocator could be asked."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


@contextmanager
def building() -> Iterator[None]:
    """Build a large, acyclic set of objects (a data set's documents) without the cycle collector.

    Documents, their strings and the people they came from hold no reference cycles, so the
    collector finds nothing in them, yet while hundreds of thousands are made it walks all of them
    again and again (a quarter of the CPU of a length-scorer run over PRISM's 42,609 pairs). It is
    paused while they are built (each object is still freed the moment nothing refers to it) and
    what exists afterwards is moved out of its reach (``gc.freeze``), so lm-eval's requests, made
    next, do not make it walk the documents either. One collection runs first: cyclic garbage made
    while the collector was paused would otherwise be frozen with the documents and never freed.
    The collector's state is restored on the way out.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        gc.freeze()
        if enabled:
            gc.enable()


class _Layout:
    """Instances only lend their ``__dict__``: see :func:`compact_dict`."""


#: One class per set of keys (in order): CPython shares one key table among its instances' dicts.
_LAYOUTS: dict[tuple[str, ...], type] = {}
_LAYOUTS_MAX = 256


def compact_dict(keys: tuple[str, ...], values: Iterable[Any]) -> dict[str, Any]:
    """A plain ``dict`` of ``keys`` (in this order) to ``values`` whose key table is shared with
    every other dict made here with the same keys.

    Hundreds of thousands of documents with the same twenty fields each held their own copy of the
    same key table (about 470 bytes a document); the dict of an instance's attributes shares its
    class's table (about 270 bytes). It is an ordinary ``dict`` in every other way (its type, its
    order, what ``json`` and ``==`` see); a key added later just gives it a table of its own.

    Args:
        keys: the field names, in the order the dict lists them.
        values: one value per key.
    """
    layout = _LAYOUTS.get(keys)
    if layout is None:
        if len(_LAYOUTS) >= _LAYOUTS_MAX or not all(type(k) is str and not k.startswith("__") for k in keys):
            return dict(zip(keys, values))
        layout = _LAYOUTS[keys] = type("_DocumentLayout", (_Layout,), {})
    shared: dict[str, Any] = layout().__dict__  # empty, but already on the class's key table
    shared.update(zip(keys, values))
    return shared

"""Rendered prompts, kept out of the documents lm-eval writes to the samples file.

With ``--log_samples`` lm-eval writes each sample's document *and* the request it built
from it (``arguments``: the chat messages as sent). A prompt inside the document was
therefore written twice, and profile-aware prompts are most of a samples file. The
loader hands lm-eval documents whose prompt sits here instead, named by ``prompt_key``
(a hash of the text); the task YAMLs read it back with
``doc_to_text: !function utils.doc_prompt``. The samples file then holds every prompt
once, in ``arguments``, exactly as it was sent.

A loader that can render a prompt again on demand registers how (:func:`rebuildable`);
the store then keeps that recipe instead of the text, and :func:`doc_prompt` renders it
when lm-eval asks. lm-eval keeps every prompt in its requests anyway, so holding our own
copy as well doubled the largest thing a profile-aware run keeps (71 MB of 310 MB of
Python objects on the full benchmark).

Process-wide: the loader and the scorers run in the same process as lm-eval.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple


class _Recipe(NamedTuple):
    """How to render a prompt again, and a check that it did."""

    rebuild: Callable[[], str]
    #: ``hash()`` of the text: the store lives in one process, where a string's hash is
    #: fixed, and it costs a fraction of hashing the text's bytes again at every render.
    fingerprint: int


_PROMPTS: dict[str, str | _Recipe] = {}

#: The texts served last, by ``id``, with their keys: whoever asks for a just-served
#: text's key (prb-judge's chat contexts, right after lm-eval's ``doc_to_text``) gets it
#: without hashing the text again. Holding the text keeps its ``id`` from being reused.
_SERVED: dict[int, tuple[str, str]] = {}
_SERVED_MAX = 64
# prb-judge renders prompts on its event-loop thread while lm-eval's thread may ask too;
# trimming the table is two steps (find the oldest, drop it).
_SERVED_LOCK = threading.Lock()


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def rebuildable(text: str, rebuild: Callable[[], str]) -> str:
    """Note that the prompt ``text`` can be rendered again by ``rebuild``; returns ``text``.

    Args:
        text: the rendered prompt.
        rebuild: renders exactly ``text`` again (its inputs bound now, not looked up later).
    """
    key = _key(text)
    if key not in _PROMPTS:
        _PROMPTS[key] = _Recipe(rebuild, hash(text))
    return text


def stash(docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents with each ``prompt`` replaced by its ``prompt_key`` (the text kept here)."""
    from prb_tasks.common.memory import compact_dict

    out: list[dict[str, Any]] = []
    # Documents often share one prompt object (the pairs of a turn): hashed once, one key string for
    # all of them. Keyed by id; the text is held beside its key, so no other text gets its id meanwhile.
    keys: dict[int, tuple[str, str]] = {}
    # The documents of a loader share one layout (its keys, in order): the last one's renamed keys and the
    # prompt's place are kept, and a document's keys compared with it (the same key strings: by identity).
    names: tuple[str, ...] = ()
    renamed: tuple[str, ...] = ()
    place = 0
    for doc in docs:
        if "prompt" not in doc:
            out.append(doc)
            continue
        text = doc["prompt"]
        held = keys.get(id(text))
        if held is None or held[0] is not text:
            held = keys[id(text)] = (text, _key(text))
            _PROMPTS.setdefault(held[1], text)  # a recipe registered for this text stays instead
        layout = tuple(doc)
        if layout != names:
            names, place = layout, layout.index("prompt")
            renamed = tuple("prompt_key" if name == "prompt" else name for name in names)
        values = list(doc.values())
        values[place] = held[1]
        out.append(compact_dict(renamed, values))
    return out


def doc_prompt(doc: dict[str, Any]) -> str:
    """The prompt of a document: its own ``prompt``, or the text behind its ``prompt_key``."""
    if "prompt" in doc:
        return doc["prompt"]
    return prompt_text(doc["prompt_key"], f"document {doc.get('pair_key', '?')}")


def kept_key(text: str) -> str | None:
    """The key under which this store keeps ``text`` (as text or recipe), or None.

    Lets holders of a rendered prompt (prb-judge's chat contexts) keep the key instead.
    """
    served = _SERVED.get(id(text))
    if served is not None and served[0] is text:
        return served[1]
    key = _key(text)
    return key if key in _PROMPTS else None


def prompt_text(key: str, what: str = "a prompt") -> str:
    """The text kept under ``key``, rendered again if a recipe is kept.

    Args:
        key: a ``prompt_key`` (from :func:`stash` or :func:`kept_key`).
        what: names the prompt's owner in errors (e.g. ``document <pair_key>``).
    """
    try:
        kept = _PROMPTS[key]
    except KeyError:
        raise KeyError(f"prb: no prompt for {what}; prompts are kept by the prb loader of the same process") from None
    if isinstance(kept, str):
        return _served(kept, key)
    text = kept.rebuild()
    if hash(text) != kept.fingerprint:  # a recipe must give back the very text it was noted for
        raise RuntimeError(f"prb: the prompt of {what} rendered differently the second time; please report this")
    return _served(text, key)


def _served(text: str, key: str) -> str:
    # Already in the table (lm-eval asks for a pair's prompt once per document and prb-rm once per
    # answer, one after the other): nothing to add. A read without the lock: a dict lookup is atomic.
    held = _SERVED.get(id(text))
    if held is not None and held[0] is text and held[1] == key:
        return text
    with _SERVED_LOCK:
        if len(_SERVED) >= _SERVED_MAX:
            del _SERVED[next(iter(_SERVED))]
        _SERVED[id(text)] = (text, key)
    return text

"""Rendered prompts, kept out of the documents lm-eval writes to the samples file.

With ``--log_samples`` lm-eval writes each sample's document *and* the request it built
from it (``arguments``: the chat messages as sent). A prompt inside the document was
therefore written twice, and profile-aware prompts are most of a samples file. The
loader hands lm-eval documents whose prompt sits here instead, named by ``prompt_key``
(a hash of the text); the task YAMLs read it back with
``doc_to_text: !function utils.doc_prompt``. The samples file then holds every prompt
once, in ``arguments``, exactly as it was sent.

Process-wide: the loader and the scorers run in the same process as lm-eval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

_PROMPTS: dict[str, str] = {}


def stash(docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents with each ``prompt`` replaced by its ``prompt_key`` (the text kept here)."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        if "prompt" not in doc:
            out.append(doc)
            continue
        text = doc["prompt"]
        key = hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()
        _PROMPTS.setdefault(key, text)
        out.append({("prompt_key" if name == "prompt" else name): (key if name == "prompt" else value)
                    for name, value in doc.items()})
    return out


def doc_prompt(doc: dict[str, Any]) -> str:
    """The prompt of a document: its own ``prompt``, or the text behind its ``prompt_key``."""
    if "prompt" in doc:
        return doc["prompt"]
    try:
        return _PROMPTS[doc["prompt_key"]]
    except KeyError:
        raise KeyError(
            f"prb: no prompt for document {doc.get('pair_key', '?')}; prompts are kept by the prb loader "
            "of the same process"
        ) from None

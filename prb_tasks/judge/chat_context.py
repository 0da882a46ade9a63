"""The contexts lm-eval holds for ``prb-judge``: chat messages, as JSON or in compact form.

With ``--apply_chat_template`` lm-eval asks the model to turn each request's messages
into one context string and keeps that string in its request for the whole run (and in
the logged samples after it). As JSON, that is a full copy of every prompt: on
``personalized_rb_profile`` at 4x the published size, about 320 MB of a 1.2 GB peak.

While ``prb eval`` runs (:func:`compact_contexts`), a message whose text the prompt store
keeps (:mod:`prb_tasks.prompts.prompt_store`) is held by its key instead, and other texts
(the shared system rules) are held once for all requests. A text under
:data:`HOLD_TEXT_BELOW` characters is held as it is, key or not: a key costs two renders
of the prompt (to send it, and for the samples file), which for the short prompts of the
tasks without profiles cost more CPU than their text costs memory (1.3 KB per prompt on
``personalized_rb``; a profile-aware prompt is about 14 KB). The context lm-eval keeps is
then a short reference, :class:`CompactChat`, which prb-judge expands when it builds the
request to send, and which ``prb eval`` expands when it writes the samples file and
computes lm-eval's ``prompt_hash`` (:func:`expand_samples`, :func:`fix_prompt_hashes`):
the files are the same as with plain JSON contexts. Outside ``prb eval`` (plain
``lm_eval``, which writes the samples itself) contexts stay JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from prb_tasks.prompts import prompt_store

#: Texts of the messages behind each compact context: (role, text or prompt key, is key).
_Parts = tuple[tuple[str, str, bool], ...]

_ENTRIES: dict[str, _Parts] = {}
_TEXTS: dict[str, str] = {}
#: lm-eval's ``prompt_hash`` of each compact context's JSON, taken while the text is at hand.
_HASHES: dict[str, str] = {}
_ACTIVE = 0
#: How many open :func:`compact_contexts` want prompt hashes taken.
_HASHING = 0

_PREFIX = "prb-chat:"

#: Characters under which a prompt is held as text rather than by its prompt-store key.
HOLD_TEXT_BELOW = 4096


class ChatMessagesJson(str):
    """A context that holds chat messages as JSON (made by ``JudgeLM.apply_chat_template``)."""

    __slots__ = ()


class CompactChat(str):
    """A short reference to chat messages kept by this module (see the module docstring).

    Formatting it (lm-eval's ``--write_out`` prints contexts with an f-string) gives the
    messages as JSON, as a :class:`ChatMessagesJson` context would.
    """

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return format(expand_json(self), spec)


@contextlib.contextmanager
def compact_contexts(enabled: bool = True, prompt_hashes: bool = True) -> Iterator[None]:
    """Make :func:`chat_context` return compact contexts while inside (when ``enabled``).

    Args:
        enabled: False leaves contexts as JSON (for runs whose samples are read by
            something other than ``prb eval``'s writer, e.g. lm-eval's loggers).
        prompt_hashes: take each context's ``prompt_hash`` as it is made (a JSON dump and
            a hash of every prompt); only logged samples carry it, so a run without
            ``--log_samples`` passes False. :func:`fix_prompt_hashes` renders a missing one.
    """
    global _ACTIVE, _HASHING
    if not enabled:
        yield
        return
    _ACTIVE += 1
    _HASHING += int(prompt_hashes)
    try:
        yield
    finally:
        _ACTIVE -= 1
        _HASHING -= int(prompt_hashes)
        if not _ACTIVE:
            _ENTRIES.clear()
            _TEXTS.clear()
            _HASHES.clear()


def chat_context(messages: Iterable[Mapping[str, Any]]) -> str:
    """The context for these chat messages: a :class:`CompactChat` inside
    :func:`compact_contexts`, else the messages as :class:`ChatMessagesJson`."""
    pairs = [(str(m["role"]), str(m["content"])) for m in messages]
    if not _ACTIVE:
        return ChatMessagesJson(_dump(pairs))
    parts: list[tuple[str, str, bool]] = []
    digest = hashlib.blake2b(digest_size=16)
    for role, text in pairs:
        key = prompt_store.kept_key(text) if len(text) >= HOLD_TEXT_BELOW else None
        if key is not None:
            parts.append((role, key, True))
            digest.update(f"{role}\0k{key}\0".encode())
        else:
            parts.append((role, _TEXTS.setdefault(text, text), False))
            digest.update(f"{role}\0t".encode() + hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest())
    # Named by content: identical messages give the identical context, as JSON would
    # (prb-judge numbers repeated identical requests by their context).
    ref = _PREFIX + digest.hexdigest()
    if ref not in _ENTRIES:
        _ENTRIES[ref] = tuple(parts)
        if _HASHING:
            # Hashed now, while the text is here: rendering every prompt again only to hash
            # it cost as much as sending it.
            from lm_eval.utils import hash_string

            _HASHES[ref] = hash_string(_dump(pairs))
    return CompactChat(ref)


def expand_messages(context: CompactChat) -> list[dict[str, str]]:
    """The chat messages behind a compact context, prompts rendered again."""
    try:
        parts = _ENTRIES[str.__str__(context)]
    except KeyError:
        raise KeyError(f"prb: the chat context {context!s} is not known in this process; "
                       "compact contexts live only while prb eval runs") from None
    return [{"role": role, "content": prompt_store.prompt_text(value) if is_key else value}
            for role, value, is_key in parts]


def expand_json(context: CompactChat) -> str:
    """The messages behind a compact context as the JSON a plain context would hold."""
    return _dump((m["role"], m["content"]) for m in expand_messages(context))


def _dump(pairs: Iterable[tuple[str, str]]) -> str:
    return json.dumps([{"role": role, "content": content} for role, content in pairs], ensure_ascii=False)


def _expanded_arguments(arguments: Sequence[Any]) -> list[Any]:
    return [tuple(expand_json(a) if isinstance(a, CompactChat) else a for a in args) for args in arguments]


def fix_prompt_hashes(samples: Mapping[str, list[dict[str, Any]]]) -> None:
    """Set each logged sample's ``prompt_hash`` to lm-eval's hash of the expanded context.

    lm-eval hashed the compact reference; the results file's task hashes and the samples
    file should carry the hash of the prompt itself, as without compact contexts.
    """
    for task_samples in samples.values():
        for sample in task_samples:
            arguments = sample.get("arguments")
            if arguments and isinstance(arguments, list) and arguments[0] and isinstance(arguments[0][0], CompactChat):
                ref = str.__str__(arguments[0][0])
                if ref not in _HASHES:  # not taken as the context was made (prompt_hashes=False)
                    from lm_eval.utils import hash_string

                    _HASHES[ref] = hash_string(expand_json(arguments[0][0]))
                sample["prompt_hash"] = _HASHES[ref]


def expand_samples(samples: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The logged samples with compact contexts expanded, one sample at a time.

    Each sample with a compact context is yielded as a shallow copy, so the writer's
    changes (lm-eval rewrites ``arguments`` while saving) go to the copy and the expanded
    prompt is freed once it is written.
    """
    for sample in samples:
        arguments = sample.get("arguments")
        if isinstance(arguments, list) and any(isinstance(a, CompactChat) for args in arguments for a in args):
            sample = {**sample, "arguments": _expanded_arguments(arguments)}
        yield sample

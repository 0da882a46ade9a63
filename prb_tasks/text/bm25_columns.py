"""BM25 rankings of many profiles at once, over Arrow text columns, with numpy.

Gives exactly the rankings of :class:`prb_tasks.text.bm25.BM25Index` (same tokens, same
floating-point operations in the same order, ties in profile order), about ten times
faster: the pure-Python index builds a Python string for each of the ~46 million words of
the full benchmark, while this works on the UTF-8 bytes of all posts at once.

How the words are found, byte by byte, matching ``tokenize``'s regular expression
``[a-z0-9]+(?:'[a-z]+)?`` on the lower-cased text:

- a word is a maximal run of ASCII letters and digits (every other byte, including all
  bytes of non-ASCII characters, separates words; the two non-ASCII characters whose
  lower case contains an ASCII letter, U+0130 and U+212A, are first replaced by that
  lower case, as ``str.lower`` does);
- a run followed by an apostrophe and a letter takes the apostrophe and the following
  letters (up to the next digit or separator) into the same word; what remains of that
  next run (from its first digit) is a word of its own, which may in turn take the next
  apostrophe; a run whose letters were all taken is no word of its own and takes nothing
  (so ``a'b'c'd`` gives ``a'b``, ``c'd``).

Words are compared as up to 16 bytes packed into two integers (exact), longer words by
their bytes. Only two numbers per post matter to BM25: its length in words (stop words
excluded) and how often each query word occurs; nothing else is kept.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from prb_tasks.text.bm25 import _STOP, BM25Index, tokenize

_APOSTROPHE = ord("'")
# Characters outside ASCII whose lower case (str.lower) contains an ASCII letter.
_SPECIAL_LOWER = {"\u0130": "i\u0307", "\u212a": "k"}

_LOWER = np.arange(256, dtype=np.uint8)
_LOWER[ord("A"):ord("Z") + 1] += 32
_LETTER = np.zeros(256, dtype=bool)
_LETTER[ord("a"):ord("z") + 1] = True
_LETTER[ord("A"):ord("Z") + 1] = True
_ALNUM = _LETTER.copy()
_ALNUM[ord("0"):ord("9") + 1] = True


def _pack(word: bytes) -> tuple[int, int]:
    """The first 8 and the next 8 bytes of ``word`` as integers, as :func:`_token_keys` packs them."""
    word = word.lower()
    return int.from_bytes(word[:8], "little"), int.from_bytes(word[8:16], "little")


_STOP_WORDS = tuple(sorted(_STOP))


def _text_bytes(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """The lower-cased bytes of an Arrow string array and each string's start offset (plus the end)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for upper, lower in _SPECIAL_LOWER.items():
        values = pc.replace_substring(values, upper, lower)
    if pa.types.is_large_string(values.type):
        offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)
    else:
        offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)
    offsets = offsets[values.offset:values.offset + len(values) + 1].astype(np.int64)
    data = values.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    raw = raw[offsets[0]:offsets[-1]]
    return raw, offsets - offsets[0]


def _token_spans(raw: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) byte of every word, in text order.

    Args:
        raw: the texts' bytes, concatenated.
        starts: where each text starts in ``raw``, then ``len(raw)``.
    """
    n = len(raw)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    alnum = _ALNUM[raw]
    padded = np.zeros(n + 2, dtype=np.int8)
    padded[1:-1] = alnum
    # Runs start and end where the class changes; changes alternate start, end, start...
    changes = np.flatnonzero(padded[1:] != padded[:-1])
    s = changes[0::2]
    e = changes[1::2]
    # A run that goes on into the next text is two runs.
    inner = np.unique(starts[(starts > 0) & (starts < n)])
    cut = inner[alnum[inner] & alnum[inner - 1]]
    if len(cut):
        s = np.sort(np.concatenate([s, cut]))
        e = np.sort(np.concatenate([e, cut]))
    if len(s) == 0:
        return s, e
    first = np.zeros(n + 1, dtype=bool)
    first[starts] = True
    # Runs joined by an apostrophe and a letter, inside one text: rare, handled apart.
    gap = e[:-1]
    linked = np.flatnonzero((s[1:] == gap + 1) & (raw[np.minimum(gap, n - 1)] == _APOSTROPHE) & ~first[gap]
                            & ~first[s[1:]] & _LETTER[raw[s[1:]]])
    if len(linked) == 0:
        return s, e
    start, end = s.copy(), e.copy()
    own = np.ones(len(s), dtype=bool)  # the run's tail is a word of its own
    targets = linked + 1
    # Where each target run's leading letters stop: its first digit, or its end.
    digits = np.flatnonzero(_ALNUM[raw] & ~_LETTER[raw])
    at = np.searchsorted(digits, s[targets])
    nearest = digits[np.minimum(at, max(len(digits) - 1, 0))] if len(digits) else e[targets]
    stops = np.where((at < len(digits)) & (nearest < e[targets]), nearest, e[targets])
    chained = np.isin(targets - 1, targets)
    # A target after an ordinary run: that run's word takes the target's letters.
    simple, simple_stop = targets[~chained], stops[~chained]
    end[simple - 1] = simple_stop
    whole = simple_stop == e[simple]
    own[simple[whole]] = False
    start[simple[~whole]] = simple_stop[~whole]
    # A target after a target (x'y'z...): depends on whether that one kept a word.
    for j, stop in zip(targets[chained].tolist(), stops[chained].tolist()):
        if own[j - 1]:
            end[j - 1] = stop
            if stop == e[j]:
                own[j] = False
            else:
                start[j] = stop
    return start[own], end[own]


# 0x20 in each of a word's byte lanes: OR-ing it lower-cases ASCII letters and leaves
# digits and the apostrophe (which already carry that bit) as they are.
_CASE = np.array([int.from_bytes(b"\x20" * k, "little") for k in range(9)], dtype=np.uint64)
_MASK = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


def _token_keys(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each word's first 8 bytes and next 8 bytes, lower-cased, as little-endian integers,
    zero-padded (exact for words of up to 16 bytes)."""
    padded = np.concatenate([raw, np.zeros(16, dtype=np.uint8)])
    window = np.ndarray((len(raw) + 8,), dtype="<u8", buffer=padded, strides=(1,))
    size = end - start
    lanes = np.minimum(size, 8)
    head = (window[start] & _MASK[lanes]) | _CASE[lanes]
    tail = np.zeros(len(start), dtype=np.uint64)
    longer = np.flatnonzero(size > 8)
    lanes = np.minimum(size[longer] - 8, 8)
    tail[longer] = (window[start[longer] + 8] & _MASK[lanes]) | _CASE[lanes]
    return head, tail


def _positions(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Where each of ``values`` is in ``keys`` (distinct), or -1: a hash lookup, linear in the values."""
    import pandas as pd

    return pd.Index(keys).get_indexer(values)


class _MixCollision(Exception):
    """Two query words share a mix value; the chunk is ranked by the plain index instead."""


def _mix(head: np.ndarray, tail: np.ndarray, size: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (head * np.uint64(0x9E3779B97F4A7C15)) ^ (tail * np.uint64(0xC2B2AE3D27D4EB4F)) ^ size.astype(np.uint64)


def _row_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Exact integer sums of ``values`` (one entry per post, along the first axis) per row."""
    total = np.zeros((len(values) + 1, *values.shape[1:]), dtype=np.int64)
    np.cumsum(values, axis=0, out=total[1:])
    return total[offsets[1:]] - total[offsets[:-1]]


def _rank_chunk(questions: Sequence[str], posts: Any, k1: float, b: float) -> list[np.ndarray]:
    """Full rankings for a few rows: ``posts`` is their Arrow ``list<string>`` of post texts."""
    raw, text_starts = _text_bytes(posts.flatten())
    list_offsets = posts.offsets.to_numpy().astype(np.int64)
    list_offsets -= list_offsets[0]
    n_rows, n_posts = len(questions), len(text_starts) - 1
    start, end = _token_spans(raw, text_starts)
    post = np.searchsorted(text_starts, start, side="right") - 1
    head, tail = _token_keys(raw, start, end)
    size = end - start
    row_of_post = np.repeat(np.arange(n_rows), np.diff(list_offsets))

    # Each row's query words, in first-occurrence order (BM25Index adds them in that order).
    queries = [Counter(tokenize(q)) for q in questions]
    vocabulary = sorted({term for query in queries for term in query})
    slots = max((len(q) for q in queries), default=0)
    tf: np.ndarray = np.zeros((n_posts, max(slots, 1)))
    # One hash lookup finds stop words and query words: stop words first, then the
    # query words; a match is then checked on all of (head, tail, size), so it is exact.
    encoded = [word.encode("utf-8") for word in (*_STOP_WORDS, *vocabulary)]
    packed = [_pack(word) for word in encoded]
    key_head = np.array([p[0] for p in packed], dtype=np.uint64)
    key_tail = np.array([p[1] for p in packed], dtype=np.uint64)
    key_size = np.array([len(w) for w in encoded], dtype=np.int64)
    # Words of up to 8 bytes are their own exact key (their bytes are never zero, so the
    # packed value also gives their length); longer ones use a mix of all three parts,
    # and a match on a mix is checked against the parts.
    key_mix = np.where(key_size <= 8, key_head, _mix(key_head, key_tail, key_size))
    if len(np.unique(key_mix)) < len(key_mix):  # never seen; stay exact anyway
        raise _MixCollision
    longer = size > 8
    token_key = head.copy()
    token_key[longer] = _mix(head[longer], tail[longer], size[longer])
    found_at = _positions(key_mix, token_key)
    candidate = np.flatnonzero(found_at >= 0)
    which = found_at[candidate]
    check = np.flatnonzero((key_size[which] > 8) | longer[candidate])
    wrong = check[(key_head[which[check]] != head[candidate[check]])
                  | (key_tail[which[check]] != tail[candidate[check]])
                  | (key_size[which[check]] != size[candidate[check]])]
    if len(wrong):
        keep = np.ones(len(candidate), dtype=bool)
        keep[wrong] = False
        candidate, which = candidate[keep], which[keep]
    is_stop = which < len(_STOP_WORDS)
    stop = np.zeros(len(start), dtype=bool)
    stop[candidate[is_stop]] = True
    lengths = np.bincount(post[~stop], minlength=n_posts)
    if vocabulary:
        term_id = {term: i for i, term in enumerate(vocabulary)}
        slot_of = np.full((n_rows, len(vocabulary)), -1, dtype=np.int64)
        for row, query in enumerate(queries):
            for slot, term in enumerate(query):
                slot_of[row, term_id[term]] = slot
        hits = candidate[~is_stop]
        hit_term = which[~is_stop] - len(_STOP_WORDS)
        long_word = key_size[hit_term + len(_STOP_WORDS)] > 16
        if long_word.any():  # more than 16 bytes: compare the bytes themselves
            keep = np.ones(len(hits), dtype=bool)
            for j in np.flatnonzero(long_word):
                keep[j] = raw[start[hits[j]]:end[hits[j]]].tobytes().lower() == encoded[len(_STOP_WORDS) + hit_term[j]]
            hits, hit_term = hits[keep], hit_term[keep]
        hit_post = post[hits]
        hit_slot = slot_of[row_of_post[hit_post], hit_term]
        mine = hit_slot >= 0
        flat = hit_post[mine] * tf.shape[1] + hit_slot[mine]
        tf = np.bincount(flat, minlength=tf.size).reshape(tf.shape).astype(np.float64)

    # The same floating-point operations, in the same order, as BM25Index.
    counts = np.diff(list_offsets)
    sums = _row_sums(lengths, list_offsets)
    avg = np.array([int(total) / int(n) if n else 0.0 for total, n in zip(sums, counts)])
    post_avg = avg[row_of_post]
    ratio = np.divide(lengths, post_avg, out=np.zeros(n_posts), where=post_avg != 0)
    norm = k1 * ((1.0 - b) + b * ratio)
    found = _row_sums((tf > 0).astype(np.int64), list_offsets)
    weight = np.zeros((n_rows, tf.shape[1]))
    for row, query in enumerate(queries):
        n = int(counts[row])
        for slot, qtf in enumerate(query.values()):
            f = int(found[row, slot])
            if f:
                weight[row, slot] = qtf * math.log(1.0 + (n - f + 0.5) / (f + 0.5))
    scores = np.zeros(n_posts)
    post_weight = weight[row_of_post]
    for slot in range(tf.shape[1]):
        column = tf[:, slot]
        scores += post_weight[:, slot] * column * (k1 + 1.0) / (column + norm)
    local = np.arange(n_posts) - list_offsets[row_of_post]
    order = np.lexsort((local, -scores, row_of_post))
    return [order[list_offsets[r]:list_offsets[r + 1]] - list_offsets[r] for r in range(n_rows)]


def rank_lists(questions: Sequence[str], posts: Any, k1: float = 1.5, b: float = 0.75,
               chunk_bytes: int = 4 << 20, threads: int | None = None) -> list[list[int]]:
    """Each row's posts ranked for its question, best first (ties keep profile order).

    Args:
        questions: one query per row.
        posts: an Arrow ``list<string>`` array: each row's post texts, in profile order.
        k1: term-frequency saturation (as :class:`BM25Index`).
        b: length normalisation (as :class:`BM25Index`).
        chunk_bytes: text handled at once; bounds the memory of the byte arrays.
        threads: chunks ranked at the same time (numpy and pandas release the GIL in
            the heavy steps); default: up to two, never more than the CPUs.
    """
    if len(questions) != len(posts):
        raise ValueError("one question per row of posts")
    offsets = posts.offsets.to_numpy().astype(np.int64)
    text_offsets = _text_bytes_offsets(posts.values)
    chunks: list[tuple[int, int]] = []
    row = 0
    while row < len(questions):
        stop = row + 1
        base = text_offsets[offsets[row]]
        while stop < len(questions) and text_offsets[offsets[stop + 1]] - base <= chunk_bytes:
            stop += 1
        chunks.append((row, stop))
        row = stop

    def rank(bounds: tuple[int, int]) -> list[list[int]]:
        start, stop = bounds
        chunk = posts.slice(start, stop - start)
        try:
            return [r.tolist() for r in _rank_chunk(questions[start:stop], chunk, k1, b)]
        except _MixCollision:
            return [BM25Index(texts, k1, b).top_k(q, len(texts))
                    for q, texts in zip(questions[start:stop], chunk.to_pylist())]

    workers = min(threads or 2, os.cpu_count() or 1, len(chunks))
    if workers <= 1:
        return [ranking for bounds in chunks for ranking in rank(bounds)]
    with ThreadPoolExecutor(workers, thread_name_prefix="prb-bm25") as pool:
        return [ranking for done in pool.map(rank, chunks) for ranking in done]


def _text_bytes_offsets(values: Any) -> np.ndarray:
    import pyarrow as pa

    kind = np.int64 if pa.types.is_large_string(values.type) else np.int32
    raw = np.frombuffer(values.buffers()[1], dtype=kind)
    return raw[values.offset:values.offset + len(values) + 1].astype(np.int64)

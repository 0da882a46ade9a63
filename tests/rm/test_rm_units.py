"""prb-rm building blocks that need no model: options, heads, batching, the score cache, ties."""

from __future__ import annotations

import json
import math

import diskcache
import pytest

from prb_tasks.common.retry import RetryPolicy, retry_after_seconds
from prb_tasks.rm.batching import sorted_batches
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.heads import resolve_head, reward
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.model import RewardModelLM, _merge_harness
from prb_tasks.rm.options import accepted_keys, parse_options
from prb_tasks.rm.score_cache import ScoreCache, ScorerIdentity, score_key
from prb_tasks.scoring.metrics import process_scalar

# ----------------------------------------------------------------- options


def test_unknown_key_is_rejected_in_one_line_naming_it_and_the_accepted_ones():
    with pytest.raises(RMError) as info:
        parse_options({"scorer": "bm25", "pretraind": "x"})
    message = str(info.value)
    assert "\n" not in message
    assert "'pretraind'" in message
    for key in ("pretrained", "endpoint", "cache_dir", "head", "max_length"):
        assert key in message
    assert accepted_keys() == sorted(accepted_keys())


@pytest.mark.parametrize("raw, fragment", [
    ({"dtype": "fp8"}, "dtype=fp8"),
    ({"head": "mean"}, "head=mean"),
    ({"device": "tpu"}, "device=tpu"),
    ({"batch_size": 0}, "batch_size=0"),
    ({"cache": "maybe"}, "cache=maybe"),
    ({"scorer": "hf"}, "needs pretrained"),
    ({"scorer": "served"}, "needs endpoint"),
    ({"pretrained": "a", "endpoint": "http://x"}, "not both"),
    ({"scorer": "bm25", "pretrained": "a"}, "only used by scorer=hf"),
])
def test_bad_values_are_one_line_errors(raw, fragment):
    with pytest.raises(RMError) as info:
        parse_options(raw)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_option_defaults_and_inference():
    assert parse_options({}).kind == "length"
    assert parse_options({"pretrained": "some/rm"}).kind == "hf"
    opts = parse_options({"endpoint": "http://127.0.0.1:1", "api": "pooling", "cache": "off"})
    assert opts.kind == "served" and opts.effective_api_path == "/pooling" and opts.cache is False
    assert parse_options({"batch_size": "auto:4"}).effective_batch_size == 16
    assert parse_options({"batch_size": 3}).effective_batch_size == 3
    assert parse_options({"cache": "on"}).cache is True
    assert parse_options({"api_path": "v1/classify"}).api_path == "/v1/classify"
    assert parse_options({}).resolved_cache_dir().name == "rm-scores"
    assert parse_options({"cache_dir": "/x/y"}).resolved_cache_dir().as_posix() == "/x/y"


def test_harness_values_fill_in_but_model_args_win():
    merged, from_harness = _merge_harness({"scorer": "length", "device": "cpu"},
                                          {"device": "cuda:0", "batch_size": 8, "max_batch_size": None})
    assert merged == {"scorer": "length", "device": "cpu", "batch_size": 8}
    assert from_harness is False
    merged, from_harness = _merge_harness({}, {"device": "cuda:0", "batch_size": 1})
    # lm-eval's default batch size of 1 is not taken as a request.
    assert merged == {"device": "cuda:0"} and from_harness is True


def test_model_args_and_harness_flags_may_name_the_same_key():
    # lm-eval passes batch_size and device next to --model_args; a duplicate used to crash.
    lm = RewardModelLM.create_from_arg_string("scorer=length,batch_size=4,device=cpu",
                                              {"batch_size": 1, "device": "cuda:0", "max_batch_size": None})
    assert lm.options.batch_size == 4 and lm.options.device == "cpu"
    lm = RewardModelLM.create_from_arg_obj({"scorer": "length"}, {"batch_size": "auto", "device": None})
    assert lm.options.batch_size == "auto"


# ----------------------------------------------------------------- heads and batching


def test_heads():
    assert resolve_head("auto", 1) == "logit"
    assert resolve_head("auto", 3) == "last_softmax"
    with pytest.raises(RMError):
        resolve_head("last_softmax", 1)
    assert reward([2.5], "logit") == 2.5
    values = [1.0, 2.0, 3.0]
    expected = math.exp(3.0) / sum(math.exp(v) for v in values)
    assert reward(values, "last_softmax") == pytest.approx(expected)
    assert reward([1000.0, 1001.0], "last_softmax") == pytest.approx(1 / (1 + math.exp(-1)))


def test_sorted_batches_cover_every_index_once_longest_first():
    lengths = [5, 1, 9, 9, 3, 7, 2]
    batches = sorted_batches(lengths, 3)
    assert [len(b) for b in batches] == [3, 3, 1]
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert batches[0] == [2, 3, 5]  # ties keep their original order
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(flat, reverse=True)


def test_retry_helpers():
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    for attempt in range(6):
        assert 0.0 <= RetryPolicy(base=0.5, cap=4.0).delay(attempt + 1) <= min(4.0, 0.5 * 2 ** attempt)


# ----------------------------------------------------------------- ties


def test_ties_count_as_wrong():
    doc = {"pair_key": "art/1"}
    assert process_scalar(doc, [(1.0, False), (1.0, False)]) == {"acc": 0, "acc_macro": 0, "tie_rate": 1}
    assert process_scalar(doc, [(1.0, False), (0.5, False)])["acc"] == 1
    assert process_scalar(doc, [(0.2, False), (0.5, False)])["acc"] == 0


def test_length_baseline_ties_are_reported_wrong_through_the_model():
    lm = RewardModelLM(scorer="length", cache="off")
    rewards = lm.rewards([RMInput("q", "same"), RMInput("q", "size")], disable_tqdm=True)
    assert rewards[0] == rewards[1]
    assert process_scalar({}, [(r, False) for r in rewards])["acc"] == 0


# ----------------------------------------------------------------- score cache

IDENTITY = ScorerIdentity(kind="hf", model="m", revision="r", dtype="float32", head="logit", max_length=512)


def test_score_key_depends_on_everything_that_changes_a_score():
    base = score_key(IDENTITY, "text")
    assert base == score_key(IDENTITY, "text")
    variants = [
        score_key(IDENTITY, "text "),
        score_key(ScorerIdentity(**{**IDENTITY.__dict__, "model": "m2"}), "text"),
        score_key(ScorerIdentity(**{**IDENTITY.__dict__, "revision": "r2"}), "text"),
        score_key(ScorerIdentity(**{**IDENTITY.__dict__, "dtype": "bfloat16"}), "text"),
        score_key(ScorerIdentity(**{**IDENTITY.__dict__, "head": "last_softmax"}), "text"),
        score_key(ScorerIdentity(**{**IDENTITY.__dict__, "max_length": 256}), "text"),
        score_key(ScorerIdentity(**{**IDENTITY.__dict__, "kind": "served"}), "text"),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_cache_stores_json_text_and_refuses_pickled_entries(tmp_path):
    cache = ScoreCache(tmp_path)
    cache.put("a", 1.25)
    cache.put("nan", float("nan"))
    assert cache.get("a") == 1.25
    assert cache.get("nan") is None and cache.get("missing") is None

    # Something else wrote pickled or non-numeric values into the same folder.
    class Boom:
        def __reduce__(self):
            return (exec, ("raise SystemExit('unpickled!')",))

    other = diskcache.Cache(str(tmp_path))
    other.set("evil", Boom())
    other.set("text", json.dumps("hello"))
    other.close()
    assert cache.get("evil") is None  # refused without unpickling (no SystemExit)
    assert cache.get("text") is None
    assert cache.refused == 2
    with pytest.raises(TypeError):
        cache._cache.set("obj", {"not": "json text"})


def test_model_reuses_cached_scores_and_dedupes_identical_inputs(tmp_path):
    from prb_tasks.rm.scorers.base import Scorer

    calls: list[int] = []

    class Counting(Scorer):
        name = "counting"
        identity = ScorerIdentity(kind="test", model="counting")

        def formatted(self, item):
            return item.prompt + "\n" + item.response

        def score(self, items, report=None):
            calls.append(len(items))
            out = [float(len(i.response)) for i in items]
            if report:
                report(range(len(items)), out)
            return out

    items = [RMInput("q", "a"), RMInput("q", "bb"), RMInput("q", "a")]
    lm = RewardModelLM(scorer="length", cache_dir=str(tmp_path))
    lm.scorer = Counting()
    lm.cache = ScoreCache(tmp_path)
    assert lm.rewards(items, disable_tqdm=True) == [1.0, 2.0, 1.0]
    assert calls == [2]
    assert lm.rewards(items + [RMInput("q", "ccc")], disable_tqdm=True) == [1.0, 2.0, 1.0, 3.0]
    assert calls == [2, 1]

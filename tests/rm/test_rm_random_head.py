"""prb-rm refuses a checkpoint whose head would be random (a base LM, not a reward model), or
scores it only when asked and never caches those scores; its messages echo values as typed
(issue 14, items 10 and 11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.options import _typed_text, parse_options
from prb_tasks.rm.scorers.hf import HFScorer
from prb_tasks.testing.tiny_rm import build_tiny_base_lm, build_tiny_rm
from tests.watchdog import run_watched


@pytest.fixture(scope="module")
def base_lms(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("base-lms")
    return {arch: build_tiny_base_lm(root / arch, arch) for arch in ("gpt2", "llama")}


def _scorer(path: Path, **extra) -> HFScorer:
    return HFScorer(parse_options({"pretrained": str(path), "device": "cpu", "dtype": "float32", **extra}))


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_base_language_model_is_refused_in_one_line(base_lms, arch):
    with pytest.raises(RMError) as info:
        _scorer(base_lms[arch])
    message = str(info.value)
    assert "\n" not in message
    assert "is not a reward model" in message and "score.weight" in message
    assert "allow_random_head=true" in message


def test_opt_in_scores_but_never_caches(base_lms, tmp_path):
    scorer = _scorer(base_lms["gpt2"], allow_random_head=True)
    assert scorer.identity is None  # no identity: the model never builds a score-cache key
    scores = scorer.score([RMInput("Which?", "This one."), RMInput("Which?", "That one.")])
    assert len(scores) == 2
    assert any("allow_random_head=true" in note and "not cached" in note for note in scorer.notes())


def test_a_real_reward_model_checkpoint_is_accepted(tmp_path):
    scorer = _scorer(build_tiny_rm(tmp_path / "rm", "gpt2"))
    assert scorer.identity is not None and not scorer.random_weights


def test_opt_in_is_only_for_hf():
    with pytest.raises(RMError, match="allow_random_head= is only used by scorer=hf"):
        parse_options({"scorer": "bm25", "allow_random_head": True})


def _prb(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return run_watched([sys.executable, "-m", "prb_tasks", "eval", *args], cwd=cwd, env=env,
                       capture_output=True, text=True)


@pytest.mark.slow
def test_prb_eval_refuses_then_runs_uncached_with_the_opt_in(base_lms, tmp_path):
    cache = tmp_path / "scores"
    common = f"pretrained={base_lms['llama']},dtype=float32,cache_dir={cache}"
    refused = _prb(["--model", "prb-rm", "--model_args", common, "--tasks", "personalized_rb_sample_scalar_art"],
                   cwd=tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("prb-rm: pretrained=") and "is not a reward model" in last
    assert "LOAD REPORT" not in refused.stderr  # transformers' table is replaced by our line

    allowed = _prb(["--model", "prb-rm", "--model_args", common + ",allow_random_head=true",
                    "--tasks", "personalized_rb_sample_scalar_art"], cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr[-3000:]
    assert "initialised at random, so scores are noise and were not cached" in allowed.stderr
    stored = list(cache.rglob("*")) if cache.exists() else []
    assert not [p for p in stored if p.is_file()], "scores of a random head were cached"


def test_values_are_echoed_as_typed(tmp_path):
    argv = ["prb eval", "run", "--model", "prb-rm", "--model_args", "scorer=served,endpoint=http://x,max_retries=-1"]
    assert _typed_text("max_retries", -1.0, argv) == "-1"
    assert _typed_text("max_retries", -1.0, ["python"]) == "-1.0"  # no command line to read: as received
    assert _typed_text("max_retries", 3.0, argv) == "3.0"  # the command line says something else
    done = _prb(["--model", "prb-rm", "--model_args", "scorer=served,endpoint=http://127.0.0.1:9,max_retries=-1",
                 "--tasks", "personalized_rb_sample_scalar_art"], cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "prb-rm: model_args max_retries=-1 is invalid: Input should be greater than or equal to 0")

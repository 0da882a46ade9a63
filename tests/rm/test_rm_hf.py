"""scorer=hf with tiny random GPT-2 and Llama sequence classifiers built offline."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from prb_tasks.data.personalized_rb.subsets import SUBSETS  # noqa: E402
from prb_tasks.documents.personalized_rb import build_docs  # noqa: E402
from prb_tasks.rm.errors import RMError  # noqa: E402
from prb_tasks.rm.inputs import RMInput  # noqa: E402
from prb_tasks.rm.model import RewardModelLM  # noqa: E402
from prb_tasks.rm.options import parse_options  # noqa: E402
from prb_tasks.rm.scorers.hf import HFScorer  # noqa: E402
from prb_tasks.testing.tiny_rm import TINY_CHAT_TEMPLATE, build_tiny_rm  # noqa: E402
from tests.watchdog import run_watched  # noqa: E402

TOL = 1e-4


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-rms")
    return {
        "gpt2": build_tiny_rm(root / "gpt2", "gpt2"),
        "llama_chat": build_tiny_rm(root / "llama_chat", "llama", chat_template=TINY_CHAT_TEMPLATE),
        "llama3": build_tiny_rm(root / "llama3", "llama", num_labels=3),
    }


@pytest.fixture(scope="module")
def sample_docs() -> list[dict]:
    return [doc for s in SUBSETS for doc in build_docs(s.config, "scalar", source="sample")]


@pytest.fixture(scope="module")
def items(sample_docs) -> list[RMInput]:
    out = [RMInput(d["prompt"], c, d["profile_key"], d["question"]) for d in sample_docs for c in d["choices"]]
    return out[:32]


def scorer(path: Path, **extra) -> HFScorer:
    return HFScorer(parse_options({"pretrained": str(path), "device": "cpu", "dtype": "float32", **extra}))


@pytest.mark.parametrize("name", ["gpt2", "llama_chat"])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_scores_do_not_depend_on_batching_or_padding_side(models, items, name, padding_side):
    alone = scorer(models[name], batch_size=1).score(items)
    batched_scorer = scorer(models[name], batch_size=16, padding_side=padding_side)
    batched = batched_scorer.score(items)
    assert max(abs(a - b) for a, b in zip(alone, batched)) < TOL
    # Random weights still tell responses apart: no accidental constant output.
    assert len({round(x, 4) for x in alone}) > len(alone) // 2
    assert batched_scorer.pad_id is not None


def test_results_come_back_in_the_original_order(models, items):
    s = scorer(models["gpt2"], batch_size=5)
    forward = s.score(items)
    backward = s.score(list(reversed(items)))
    assert max(abs(a - b) for a, b in zip(forward, reversed(backward))) < TOL


def test_missing_pad_token_is_handled_and_reported(models, items):
    s = scorer(models["gpt2"], batch_size=16)
    assert s.tokenizer.pad_token is None
    assert s.model.config.pad_token_id == s.tokenizer.eos_token_id == s.pad_id
    s.score(items[:4])
    assert any("no pad token" in note for note in s.notes())


def test_chat_template_is_used_when_present_and_plain_text_otherwise(models, items):
    chat = scorer(models["llama_chat"])
    assert chat.format == "chat"
    text = chat.formatted(items[0])
    assert text.startswith("<s><|user|>\n") and "<|assistant|>\n" + items[0].response in text
    plain = scorer(models["gpt2"])
    assert plain.format == "plain"
    assert plain.formatted(items[0]) == f"User: {items[0].prompt}\n\nAssistant: {items[0].response}"
    forced = scorer(models["llama_chat"], input_format="plain")
    assert forced.score(items[:2]) != chat.score(items[:2])
    with pytest.raises(RMError, match="no chat template"):
        scorer(models["gpt2"], input_format="chat")


def test_long_inputs_are_truncated_and_counted(models, items):
    limit = 270
    s = scorer(models["gpt2"], max_length=limit, batch_size=16)
    full = [len(s.tokenizer(s.formatted(i))["input_ids"]) for i in items]
    expected = sum(n > limit for n in full)
    assert 0 < expected < len(items)
    batched = s.score(items)
    assert s.truncated == expected
    assert any(f"{expected} of {len(items)} inputs were longer than max_length={limit}" in n for n in s.notes())
    alone = scorer(models["gpt2"], max_length=limit, batch_size=1).score(items)
    assert max(abs(a - b) for a, b in zip(alone, batched)) < TOL


def test_truncation_keeps_the_end_by_default(models):
    s = scorer(models["gpt2"], max_length=16)
    long_prompt = " ".join(["music"] * 200)
    a = s.score([RMInput(long_prompt, "I love jazz records.")])[0]
    b = s.score([RMInput("other " + long_prompt, "I love jazz records.")])[0]
    assert a == pytest.approx(b, abs=TOL)  # only the end of the conversation is read


def test_multi_class_heads_use_the_last_class_softmax(models, items):
    s = scorer(models["llama3"], batch_size=4)
    assert s.num_labels == 3 and s.head == "last_softmax"
    scores = s.score(items[:6])
    assert all(0.0 < x < 1.0 for x in scores)
    ids = s.tokenizer(s.formatted(items[0]), add_special_tokens=True, return_tensors="pt")
    with torch.inference_mode():
        logits = s.model(**ids).logits[0].float()
    assert scores[0] == pytest.approx(float(torch.softmax(logits, -1)[-1]), abs=1e-5)
    raw = scorer(models["llama3"], head="logit").score(items[:1])[0]
    assert raw == pytest.approx(float(logits[-1]), abs=1e-4)


def test_cache_is_reused_and_keyed_on_settings(models, items, tmp_path):
    args = {"pretrained": str(models["gpt2"]), "device": "cpu", "cache_dir": str(tmp_path)}
    first = RewardModelLM(**args).rewards(items[:8], disable_tqdm=True)
    again = RewardModelLM(**args)
    again.scorer.score = lambda *a, **k: pytest.fail("should have come from the cache")  # type: ignore[method-assign]
    assert again.rewards(items[:8], disable_tqdm=True) == first
    # Another max_length is another key: scored anew.
    other = RewardModelLM(**{**args, "max_length": 32})
    calls = []
    original = other.scorer.score
    other.scorer.score = lambda batch, report=None: calls.append(len(batch)) or original(batch, report)  # type: ignore[method-assign]
    other.rewards(items[:8], disable_tqdm=True)
    assert calls == [8]


def test_unloadable_model_is_a_one_line_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(RMError) as info:
        scorer(tmp_path / "empty")
    assert "cannot load pretrained=" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(RMError) as info:
        scorer(tmp_path / "nothing-here")
    assert "no such folder" in str(info.value) and "\n" not in str(info.value)


# ----------------------------------------------------------------- end to end through `prb eval`


def run_prb(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return run_watched([sys.executable, "-m", "prb_tasks", "eval", *args], cwd=cwd, env=env,
                       capture_output=True, text=True)


def logged_rewards(out: Path, task: str) -> dict[str, list[float]]:
    files = sorted(out.rglob(f"samples_{task}_*.jsonl"))
    assert files, f"no samples for {task}"
    rows = [json.loads(line) for line in files[-1].read_text(encoding="utf-8").splitlines() if line]
    return {row["doc"]["id"]: [float(r[0]) for r in row["filtered_resps"]] for row in rows}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "llama_chat"])
def test_prb_eval_end_to_end(models, sample_docs, tmp_path, name):
    out = tmp_path / "runs"
    proc = run_prb(["--model", "prb-rm", "--model_args",
                    f"pretrained={models[name]},dtype=float32,cache_dir={tmp_path / 'cache'}",
                    "--tasks", "personalized_rb_sample_scalar", "--output_path", str(out), "--log_samples"],
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(sorted(out.rglob("results_*.json"))[-1].read_text(encoding="utf-8"))
    acc = results["results"]["personalized_rb_sample_scalar"]["acc,none"]
    assert 0.0 <= acc <= 1.0
    assert "pairs/s" in proc.stderr and "inputs were longer than max_length" in proc.stderr
    # The model loads under prb-rm's bar: transformers' own bar may not move the cursor in a pipe.
    assert "\x1b[" not in proc.stderr, proc.stderr[-3000:]
    # The harness fed the RM exactly what the scorer formats for each document.
    logged = logged_rewards(out, "personalized_rb_sample_scalar_art")
    s = scorer(models[name])
    art = [d for d in sample_docs if d["subset"] == "Art_and_Entertainment"]
    expected = s.score([RMInput(d["prompt"], c) for d in art for c in d["choices"]])
    got = [x for d in art for x in logged[d["id"]]]
    assert max(abs(a - b) for a, b in zip(got, expected)) < TOL
    # Accuracy is "chosen strictly above rejected" over those rewards.
    wins = sum(expected[2 * i] > expected[2 * i + 1] for i in range(len(art)))
    assert results["results"]["personalized_rb_sample_scalar_art"]["acc,none"] == pytest.approx(wins / len(art))


def test_unknown_model_arg_fails_the_command_with_the_key(tmp_path, models):
    proc = run_prb(["--model", "prb-rm", "--model_args", f"pretrained={models['gpt2']},bach_size=4",
                    "--tasks", "personalized_rb_sample_scalar_art"], cwd=tmp_path)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("prb-rm: unknown model_args key 'bach_size' (did you mean 'batch_size'")
    assert "; accepted: " in last
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_lm_eval_causal_lm_backend_runs_the_scalar_tasks(tmp_path):
    """The claim of docs/reward-models.md: lm-eval's own `hf` backend scores responses by log-likelihood."""
    pytest.importorskip("accelerate")  # lm-eval's hf backend needs it (lm-eval[hf])
    from transformers import AutoModelForCausalLM, GPT2Config

    from prb_tasks.testing.tiny_rm import train_tokenizer

    folder = tmp_path / "tiny-lm"
    tokenizer = train_tokenizer("gpt2")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=512,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    out = tmp_path / "runs"
    proc = run_prb(["--model", "hf", "--model_args", f"pretrained={folder},dtype=float32", "--device", "cpu",
                    "--tasks", "personalized_rb_sample_scalar_art", "--output_path", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(sorted(out.rglob("results_*.json"))[-1].read_text(encoding="utf-8"))
    acc = results["results"]["personalized_rb_sample_scalar_art"]["acc,none"]
    assert 0.0 <= acc <= 1.0 and not math.isnan(acc)


def test_pair_format_for_cross_encoder_style_models(models, items):
    pair = scorer(models["llama3"], input_format="pair", head="logit", batch_size=1)
    assert pair.formatted(items[0]) == json.dumps([items[0].prompt, items[0].response], ensure_ascii=False)
    alone = pair.score(items[:8])
    batched = scorer(models["llama3"], input_format="pair", head="logit", batch_size=8).score(items[:8])
    assert max(abs(a - b) for a, b in zip(alone, batched)) < TOL


def test_inputs_are_tokenized_a_chunk_at_a_time(models, items, monkeypatch):
    # The tokenizer's output for every input at once (offsets, masks, untruncated ids)
    # held gigabytes on the full benchmark's profile prompts; a chunk at a time it does not
    # grow with the data, and the scores stay the same.
    s = scorer(models["gpt2"], max_length=24)
    many = [RMInput(f"{i.prompt} {n}", i.response) for n in range(20) for i in items]
    expected = [s.score([item])[0] for item in many[:40]]
    sizes: list[int] = []
    encode = HFScorer._encode

    def counted(self, chunk_items, texts, truncate):
        sizes.append(len(texts))
        return encode(self, chunk_items, texts, truncate)

    monkeypatch.setattr(HFScorer, "_encode", counted)
    before = s.truncated
    rewards = s.score(many)
    assert len(many) > 600 and max(sizes) <= 256
    assert rewards[:40] == pytest.approx(expected, abs=1e-5)
    assert s.truncated - before == sum(len(s.tokenizer(s.formatted(i))["input_ids"]) > 24 for i in many)


def test_formatted_inputs_are_let_go_once_tokenized(models, items, monkeypatch):
    # Issue 51: every input's formatted text (a profile prompt and a response: about 10 KB
    # each on the full benchmark) stayed alive through every forward pass, so the run held
    # all of them and grew with the data. Counted at each forward pass, by the texts' own
    # count (a scan of every object in a worker late in the suite took a second or more per pass).

    class Text(str):
        made = 0
        gone = 0

        def __new__(cls, value: str) -> "Text":
            cls.made += 1
            return super().__new__(cls, value)

        def __del__(self) -> None:
            type(self).gone += 1

    s = scorer(models["gpt2"], max_length=24)
    many = [RMInput(f"{i.prompt} {n}", i.response) for n in range(20) for i in items]
    expected = s.score(many)
    formatted, forward = HFScorer.formatted, HFScorer._forward
    alive: list[int] = []

    def counted(self, batch):
        alive.append(Text.made - Text.gone)
        return forward(self, batch)

    monkeypatch.setattr(HFScorer, "formatted", lambda self, item: Text(formatted(self, item)))
    monkeypatch.setattr(HFScorer, "_forward", counted)
    assert s.score(many) == pytest.approx(expected, abs=1e-6)
    assert len(many) > 600 and alive and max(alive) == 0 and Text.made >= len(many), (alive[:3], Text.made)


def test_kept_token_ids_take_four_bytes_each(models, items):
    # Issue 51: the tokenized inputs are kept for the whole scoring run (sorted by length
    # for batching), at up to 512 ids and a mask each per input; 8-byte ids held twice
    # what any vocabulary needs.
    s = scorer(models["gpt2"], max_length=24)
    features = s._features(list(items))
    kept = [value for feature in features for value in feature.values()]
    assert kept and all(value.itemsize == 4 for value in kept)
    assert [list(f["input_ids"]) for f in features] == [s.token_ids(item) for item in items]

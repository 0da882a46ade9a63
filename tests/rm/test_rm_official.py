"""``prb-rm protocol=official``: the authors' scalar pipeline on tiny offline models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lm_eval.api.instance import Instance  # noqa: E402

from prb_tasks.documents.personalized_rb import build_docs  # noqa: E402
from prb_tasks.rm.errors import RMError  # noqa: E402
from prb_tasks.rm.inputs import RMInput  # noqa: E402
from prb_tasks.rm.model import RewardModelLM  # noqa: E402
from prb_tasks.rm.options import parse_options  # noqa: E402
from prb_tasks.rm.scorers.hf import HFScorer  # noqa: E402
from prb_tasks.rm.scorers.hf_official import OfficialHFScorer  # noqa: E402
from prb_tasks.scoring.metrics import process_scalar  # noqa: E402
from prb_tasks.testing.tiny_rm import TINY_CHAT_TEMPLATE, build_tiny_rm, saturate_last_class  # noqa: E402
from tests.watchdog import run_watched  # noqa: E402


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("official-rms")
    saturated = build_tiny_rm(root / "saturated", "gpt2", num_labels=2, chat_template=TINY_CHAT_TEMPLATE)
    return {
        "llama": build_tiny_rm(root / "llama", "llama", chat_template=TINY_CHAT_TEMPLATE),
        "plain": build_tiny_rm(root / "plain", "gpt2"),
        "saturated": saturate_last_class(saturated),
    }


@pytest.fixture(scope="module")
def art_items() -> list[RMInput]:
    docs = build_docs("art", "scalar", source="sample")
    return [RMInput(d["prompt"], c, group="art") for d in docs for c in d["choices"]]


def hf(path: Path, **extra) -> HFScorer:
    return HFScorer(parse_options({"pretrained": str(path), "device": "cpu", **extra}))


def official(path: Path, **extra) -> OfficialHFScorer:
    return OfficialHFScorer(parse_options({"pretrained": str(path), "device": "cpu", "protocol": "official", **extra}))


def record_forwards(model) -> list[list[list[int]]]:
    """Every batch the model is called with: the input ids of each row, padding removed."""
    seen: list[list[list[int]]] = []

    def hook(module, args, kwargs):
        masks = kwargs["attention_mask"].tolist()
        seen.append([[t for t, m in zip(ids, mask) if m] for ids, mask in zip(kwargs["input_ids"].tolist(), masks)])

    model.register_forward_pre_hook(hook, with_kwargs=True)
    return seen


def test_official_tokenisation_gives_llama_style_templates_two_bos(models, art_items):
    clean, off = hf(models["llama"]), official(models["llama"])
    bos = clean.tokenizer.bos_token_id
    clean_ids, official_ids = clean.token_ids(art_items[0]), official(models["llama"]).token_ids(art_items[0])
    assert clean_ids[0] == bos and clean_ids[1] != bos
    assert official_ids[:2] == [bos, bos] and official_ids[1:] == clean_ids
    # What the model is actually fed.
    seen = record_forwards(off.model)
    off.score(art_items[:3])
    assert [row[:2] for row in seen[0]] == [[bos, bos]] * 3
    seen_clean = record_forwards(clean.model)
    clean.score(art_items[:1])
    assert seen_clean[0][0][:2] != [bos, bos] and seen_clean[0][0][0] == bos


def test_official_loads_bfloat16_and_keeps_the_tokenizers_sides(models):
    off = official(models["llama"])
    assert off.dtype == torch.bfloat16 and next(off.model.parameters()).dtype == torch.bfloat16
    assert off.max_length == 8192 and off.batch_size == 8 and off.head == "logit"
    assert (off.tokenizer.truncation_side, off.tokenizer.padding_side) == ("right", "right")
    clean = hf(models["llama"])
    assert clean.dtype == torch.float32 and clean.tokenizer.truncation_side == "left"


def test_bfloat16_softmax_turns_close_pairs_into_ties(models, art_items):
    clean = hf(models["saturated"]).score(art_items)
    off = official(models["saturated"]).score(art_items)
    pairs = range(0, len(art_items), 2)
    # float32: every response scores differently (0.998...0.99999...), no ties.
    assert all(0.998 < x < 1.0 for x in clean) and len(set(clean)) == len(clean)
    # bfloat16: every softmax rounds to 1.0, so every pair is a tie and counts wrong.
    assert set(off) == {1.0}
    for n in pairs:
        assert process_scalar({}, [(off[n], False), (off[n + 1], False)]) == {"acc": 0, "acc_macro": 0, "tie_rate": 1}
    assert sum(process_scalar({}, [(clean[n], False), (clean[n + 1], False)])["tie_rate"] for n in pairs) == 0


def _requests(items_by_task: dict[str, list[dict]]) -> list[Instance]:
    out = []
    for task, docs in items_by_task.items():
        for doc_id, doc in enumerate(docs):
            for idx, choice in enumerate(doc["choices"]):
                out.append(Instance("loglikelihood", doc, (doc["prompt"], " " + choice), idx, (task, doc_id, 1)))
    return out


def test_batches_of_eight_in_dataset_order_per_task_and_whole_batch_caching(models, tmp_path):
    art = build_docs("art", "scalar", source="sample")[:5]  # 10 responses
    life = build_docs("lifestyle", "scalar", source="sample")[:3]  # 6 responses
    args = {"pretrained": str(models["llama"]), "device": "cpu", "protocol": "official", "cache_dir": str(tmp_path)}
    lm = RewardModelLM(**args)
    seen = record_forwards(lm.scorer.model)
    requests = _requests({"personalized_rb_scalar_art": art, "personalized_rb_scalar_lifestyle": life})
    first = [r for r, _ in lm.loglikelihood(requests, disable_tqdm=True)]
    assert [len(batch) for batch in seen] == [8, 2, 6]
    # Dataset order: chosen then rejected, row by row, never sorted by length.
    items = [RMInput(d["prompt"], c) for d in art + life for c in d["choices"]]
    assert [ids for batch in seen for ids in batch] == [lm.scorer.token_ids(item) for item in items]
    assert len({len(ids) for ids in seen[0]}) > 1  # not grouped by length

    # A re-run takes everything from the cache.
    again = RewardModelLM(**args)
    seen_again = record_forwards(again.scorer.model)
    assert [r for r, _ in again.loglikelihood(requests, disable_tqdm=True)] == first
    assert seen_again == []
    # One changed response: only its batch (art rows 4-5) is scored again, whole.
    art[4] = {**art[4], "choices": [art[4]["choices"][0] + " Really.", art[4]["choices"][1]]}
    changed = [r for r, _ in again.loglikelihood(
        _requests({"personalized_rb_scalar_art": art, "personalized_rb_scalar_lifestyle": life}), disable_tqdm=True)]
    assert [len(batch) for batch in seen_again] == [2]
    assert changed[:8] == first[:8] and changed[10:] == first[10:]

    # The clean protocol never reads official scores (the protocol is part of the key).
    clean = RewardModelLM(**{**args, "protocol": "clean", "dtype": "bfloat16"})
    seen_clean = record_forwards(clean.scorer.model)
    clean.loglikelihood(requests, disable_tqdm=True)
    assert sum(len(b) for b in seen_clean) == 16


@pytest.mark.parametrize("extra, fragment", [
    ({"dtype": "float32"}, "protocol=official loads the weights in bfloat16, as the authors' script does; "
                           "drop dtype= or use protocol=clean"),
    ({"truncation_side": "left"}, "keeps the tokenizer's own truncation side"),
    ({"max_length": 4096}, "truncates at 8192 tokens"),
    ({"head": "logit"}, "drop head="),
])
def test_settings_the_protocol_fixes_are_refused(models, extra, fragment):
    with pytest.raises(RMError) as info:
        parse_options({"pretrained": str(models["llama"]), "protocol": "official", **extra})
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_official_needs_a_local_model_with_a_chat_template(models):
    with pytest.raises(RMError, match="needs pretrained=<hub id or folder> .*not scorer=bm25"):
        parse_options({"scorer": "bm25", "protocol": "official"})
    with pytest.raises(RMError, match="has none; use protocol=clean"):
        official(models["plain"])
    assert parse_options({"pretrained": "x", "protocol": "official", "batch_size": 4}).effective_batch_size == 4


def _remote_code_model(folder: Path) -> Path:
    build_tiny_rm(folder, "gpt2")
    (folder / "configuration_x.py").write_text(
        "from transformers import GPT2Config\n\n\nclass XConfig(GPT2Config):\n    model_type = 'x-gpt2'\n")
    (folder / "modeling_x.py").write_text(
        "from transformers import GPT2ForSequenceClassification\n\nfrom .configuration_x import XConfig\n\n\n"
        "class XModel(GPT2ForSequenceClassification):\n    config_class = XConfig\n")
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="x-gpt2", architectures=["XModel"],
                  auto_map={"AutoConfig": "configuration_x.XConfig",
                            "AutoModelForSequenceClassification": "modeling_x.XModel"})
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_remote_code_runs_only_when_asked(tmp_path):
    folder = _remote_code_model(tmp_path / "remote")
    for protocol in ("clean", "official"):
        with pytest.raises(RMError) as info:
            parse = {"pretrained": str(folder), "device": "cpu", "protocol": protocol, "input_format": "plain"}
            if protocol == "official":
                parse.pop("input_format")
            HFScorer(parse_options(parse))
        assert "add trust_remote_code=true to --model_args" in str(info.value) and "\n" not in str(info.value)
    loaded = hf(folder, trust_remote_code=True)
    assert type(loaded.model).__name__ == "XModel"


def run_prb(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return run_watched([sys.executable, "-m", "prb_tasks", "eval", *args], cwd=cwd, env=env,
                       capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("protocol, tie_rate", [("official", 1.0), ("clean", 0.0)])
def test_prb_eval_with_each_protocol(models, tmp_path, protocol, tie_rate):
    out = tmp_path / "runs"
    proc = run_prb(["--model", "prb-rm", "--model_args",
                    f"pretrained={models['saturated']},protocol={protocol},cache_dir={tmp_path / 'cache'}",
                    "--tasks", "personalized_rb_sample_scalar", "--output_path", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(sorted(out.rglob("results_*.json"))[-1].read_text(encoding="utf-8"))["results"]
    assert results["personalized_rb_sample_scalar"]["tie_rate,none"] == tie_rate
    if protocol == "official":
        assert results["personalized_rb_sample_scalar"]["acc,none"] == 0.0
        assert "official protocol: scored on cpu in bfloat16, batches of 8 in dataset order" in proc.stderr

"""``prb-rm protocol=official`` on RewardBench 2 and RM-Bench feeds the model exactly as each
authors' script does, against a transcription of their input code (allenai/reward-bench @05a9005
``scripts/run_v2.py`` + ``rewardbench/utils.py`` + ``RewardBenchPipeline``; THU-KEG/RM-Bench @73c52d7
``scripts/run_rm.py`` with allenai's package at 1266638), on documents the real builders make from
copies in the hub layout, one response over 2,048 tokens, a tiny Llama whose chat template writes its
own BOS (so the tokenizer's BOS doubles it)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from prb_tasks.common.harness_args import declare, parse  # noqa: E402
from prb_tasks.documents import rewardbench2, rmbench  # noqa: E402
from prb_tasks.rm.errors import RMError  # noqa: E402
from prb_tasks.rm.factory import build_scorer  # noqa: E402
from prb_tasks.rm.inputs import RMInput  # noqa: E402
from prb_tasks.rm.official_pipelines import PIPELINES  # noqa: E402
from prb_tasks.rm.options import parse_options  # noqa: E402
from prb_tasks.rm.scorers.hf import HFScorer  # noqa: E402
from prb_tasks.rm.scorers.hf_authors import AuthorsHFScorer, bitsandbytes_missing  # noqa: E402
from prb_tasks.rm.scorers.hf_official import OfficialHFScorer  # noqa: E402
from prb_tasks.testing.benchmark_copies import rewardbench2_rows, rmbench_rows, write_rewardbench2, write_rmbench  # noqa: E402
from prb_tasks.testing.tiny_rm import TINY_CHAT_TEMPLATE, build_tiny_rm  # noqa: E402

LONG_WORDS = 3000  # well over 2,048 tokens with the tiny tokenizer


def _long(seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(("alpha", "beta", "gamma", "delta", "answer", "colour")) for _ in range(LONG_WORDS))


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    # 4,096 positions: the clean pipeline keeps what theirs cuts, so the two can differ.
    return build_tiny_rm(tmp_path_factory.mktemp("authors-rm") / "rm", "llama", chat_template=TINY_CHAT_TEMPLATE,
                         max_positions=4096)


@pytest.fixture
def no_run() -> Iterator[None]:
    yield
    declare(None)


def rb2_items(tmp_path: Path) -> list[RMInput]:
    """Every response of a copy with all six subsets, in task order; one is 3,000 words (cut at 2,048 tokens)."""
    rows = rewardbench2_rows(3, 1, seed=7)
    focus = [r for r in rows if r["subset"] == "Focus"]
    focus[1]["rejected"][0] = _long(1)
    data = write_rewardbench2(tmp_path / "rb2", rows)
    items = []
    for subset in ("factuality", "precise_if", "math", "safety", "focus", "ties"):
        docs = rewardbench2.build_docs(subset, data_dir=str(data))
        items += [RMInput(d["prompt"], c, group=f"rewardbench2_{subset}") for d in docs for c in d["choices"]]
    return items


def rmb_items(tmp_path: Path) -> list[RMInput]:
    """Every response of a copy with all domains, in task order; one is 3,000 words."""
    rows = rmbench_rows(2, seed=3)
    chat = [r for r in rows if r["domain"] == "chat"]
    chat[0]["chosen"][2] = _long(2)
    data = write_rmbench(tmp_path / "rmb", rows)
    items = []
    for domain in ("chat", "math", "code", "safety"):
        docs = rmbench.build_docs(domain, data_dir=str(data))
        items += [RMInput(d["prompt"], c, group=f"rmbench_{domain}") for d in docs for c in d["choices"]]
    return items


def theirs(folder: Path, pairs: list[tuple[str, str]], left: bool) -> list[float]:
    """Their input code, transcribed (on the CPU, where their pipeline moves inputs to CUDA)."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    if left:  # run_rm.py: not custom_dialogue
        tokenizer.truncation_side = "left"
    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(folder), torch_dtype=torch.float16)
    model.eval()
    # run_v2.py / run_rm.py: pad with EOS when the tokenizer has no pad token.
    if tokenizer.pad_token_id is None:
        model.config.pad_token_id = tokenizer.eos_token_id
        tokenizer.pad_token_id = tokenizer.eos_token_id
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    # prepare_dialogue_from_tokenizer (single turn): the template rendered to text.
    texts = [tokenizer.apply_chat_template([{"role": "user", "content": p}, {"role": "assistant", "content": r}],
                                           tokenize=False) for p, r in pairs]
    out: list[float] = []
    for start in range(0, len(texts), 64):
        # RewardBenchPipeline.__call__ with truncation=True, padding=True, max_length=2048.
        inputs = tokenizer(texts[start:start + 64], truncation=True, max_length=2048, padding=True,
                           return_tensors="pt")
        if tokenizer.bos_token:
            input_ids, attention_mask = inputs["input_ids"], inputs["attention_mask"]
            seq_starts = attention_mask.argmax(dim=1)
            seq_second = torch.clamp(seq_starts + 1, max=input_ids.size(1) - 1)
            rows = torch.arange(input_ids.size(0))
            double_bos_mask = (input_ids[rows, seq_starts] == tokenizer.bos_token_id) & (
                input_ids[rows, seq_second] == tokenizer.bos_token_id)
            if double_bos_mask.any():
                attention_mask[rows[double_bos_mask], seq_starts[double_bos_mask]] = 0
        with torch.no_grad():
            logits = model(**inputs).logits
        out += [row[0] for row in logits.float().cpu().numpy().tolist()]
    return out


def authors(folder: Path, benchmark: str) -> AuthorsHFScorer:
    return AuthorsHFScorer(parse_options({"pretrained": str(folder), "device": "cpu", "protocol": "official"}),
                           PIPELINES[benchmark])


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", ["rewardbench2", "rmbench"])
def test_rewards_equal_their_input_code(model: Path, tmp_path: Path, benchmark: str) -> None:
    items = rb2_items(tmp_path) if benchmark == "rewardbench2" else rmb_items(tmp_path)
    scorer = authors(model, benchmark)
    lengths = [len(scorer.tokenizer(scorer.formatted(i))["input_ids"]) for i in items]
    assert max(lengths) > 2048 and sum(n > 2048 for n in lengths) == 1
    ours = scorer.score(items)
    expected = theirs(model, [(i.prompt, i.response) for i in items], left=benchmark == "rmbench")
    assert len(ours) == len(expected) == len(items) == {"rewardbench2": 70, "rmbench": 60}[benchmark]
    equal = sum(a == b for a, b in zip(ours, expected))
    print(f"{benchmark}: {equal} of {len(items)} rewards equal to their input code's")
    assert equal == len(items)  # N of N, bit for bit
    assert scorer.truncated == 1 and scorer.dtype == torch.float16
    assert scorer.tokenizer.truncation_side == ("left" if benchmark == "rmbench" else "right")
    # prb's clean pipeline keeps the long input whole (4,096 tokens, float32): it scores it differently.
    long = max(range(len(items)), key=lambda n: lengths[n])
    clean = HFScorer(parse_options({"pretrained": str(model), "device": "cpu"})).score([items[long]])
    assert clean[0] != pytest.approx(ours[long], abs=1e-3)


def test_the_two_benchmarks_cut_on_different_sides(model: Path, tmp_path: Path) -> None:
    items = rb2_items(tmp_path)
    long = [i for i in items if len(i.response.split()) == LONG_WORDS]
    right, left = authors(model, "rewardbench2"), authors(model, "rmbench")
    kept_right, kept_left = right.encode([right.formatted(long[0])]), left.encode([left.formatted(long[0])])
    assert kept_right["input_ids"].shape[1] == kept_left["input_ids"].shape[1] == 2048
    bos = right.tokenizer.bos_token_id
    whole = right.tokenizer(right.formatted(long[0]))["input_ids"]
    # Right side keeps the start (two BOS, the first masked); left side keeps the end, behind the one
    # BOS the tokenizer adds after cutting (the template's own BOS is cut away, so nothing is masked).
    assert kept_right["input_ids"][0].tolist() == whole[:2048] and kept_right["attention_mask"][0, 0] == 0
    assert kept_right["input_ids"][0, :2].tolist() == [bos, bos]
    assert kept_left["input_ids"][0].tolist() == [bos, *whole[-2047:]] and kept_left["attention_mask"][0].all()


def test_the_runs_tasks_choose_the_pipeline(model: Path, no_run: None) -> None:
    options = parse_options({"pretrained": str(model), "device": "cpu", "protocol": "official"})
    declare(parse(["--model", "prb-rm", "--tasks", "rewardbench2"]))
    chosen = build_scorer(options)
    assert isinstance(chosen, AuthorsHFScorer) and chosen.pipeline is PIPELINES["rewardbench2"]
    assert chosen.batch_size == 64 and chosen.max_length == 2048
    declare(parse(["--model", "prb-rm", "--tasks", "personalized_rb_scalar"]))
    personal = build_scorer(options)
    assert isinstance(personal, OfficialHFScorer) and not isinstance(personal, AuthorsHFScorer)
    declare(parse(["--model", "prb-rm", "--tasks", "rewardbench2,rmbench_chat"]))
    with pytest.raises(RMError, match="RM-Bench and RewardBench 2 load and cut inputs differently") as info:
        build_scorer(options)
    assert "\n" not in str(info.value)


def test_a_task_of_another_benchmark_is_refused(model: Path) -> None:
    scorer = authors(model, "rewardbench2")
    with pytest.raises(RMError, match="not task rmbench_chat; run each benchmark in its own command"):
        scorer.score([RMInput("Q?", "A.", group="rmbench_chat")])


def test_rmbench_8bit_is_named_when_not_reproduced(model: Path, capsys: Any) -> None:
    scorer = authors(model, "rmbench")  # "llama" is not one of their Llama-3 names: they load it in 8 bits
    missing = bitsandbytes_missing("cpu")
    assert missing is not None  # 8-bit weights never load on a CPU
    lines = [line for line in capsys.readouterr().err.splitlines() if "8 bits" in line]
    assert lines == [f"prb-rm: RM-Bench's run_rm.py loads this model in 8 bits; not reproduced ({missing}): float16 "
                     "here"]
    assert len(lines[0]) <= 120
    assert not scorer.in_8bit and next(scorer.model.parameters()).dtype == torch.float16
    assert PIPELINES["rmbench"].loads_in_8bit("meta-llama/Llama-3.1-8B-RM", "float16") is False
    assert PIPELINES["rmbench"].loads_in_8bit("some/rm", "bfloat16") is False
    assert PIPELINES["rewardbench2"].loads_in_8bit("some/rm", "float16") is False


def test_a_max_length_is_refused_in_one_line(model: Path) -> None:
    with pytest.raises(RMError, match="cuts RewardBench 2 inputs at 2048 tokens") as info:
        AuthorsHFScorer(parse_options({"pretrained": str(model), "device": "cpu", "protocol": "official",
                                       "max_length": 8192}), PIPELINES["rewardbench2"])
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("benchmark, extra, fragment", [
    ("rewardbench2", {"max_length": 4096}, "protocol=official cuts inputs at 2048 tokens, as allenai/reward-bench "
                                           "@05a9005 scripts/run_v2.py does; drop max_length="),
    ("rmbench", {"truncation_side": "right"}, "protocol=official cuts on the left, as THU-KEG/RM-Bench"),
    ("rewardbench2", {"dtype": "auto"}, "takes float16 (their default), bfloat16, float32 or float64"),
])
def test_settings_their_script_fixes_are_refused_in_their_words(model: Path, no_run: None, benchmark: str,
                                                                extra: dict, fragment: str) -> None:
    declare(parse(["--model", "prb-rm", "--tasks", benchmark]))
    with pytest.raises(RMError) as info:
        parse_options({"pretrained": str(model), "protocol": "official", **extra})
    assert fragment in str(info.value) and "\n" not in str(info.value)
    # Their --torch_dtype choices are free; float16 is theirs by default.
    assert parse_options({"pretrained": str(model), "protocol": "official", "dtype": "float32"}).dtype == "float32"

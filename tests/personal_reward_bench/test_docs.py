"""PersonalRewardBench's documents: the test split is scored, train/val pairs are the only history."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from prb_tasks.data.personal_reward_bench.reader import read_half
from prb_tasks.documents.metadata import MetadataError
from prb_tasks.documents.personal_reward_bench import build_docs, history_rows
from prb_tasks.prompts.prompt_store import doc_prompt
from prb_tasks.testing.personal_reward_bench_copy import write_copy


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_copy(tmp_path_factory.mktemp("prb_docs"), users=3)


def test_judge_scores_test_pairs_in_both_orders_with_train_val_history(copy: Path) -> None:
    half = read_half(copy, "prism")
    docs = build_docs("judge", "prism", data_dir=str(copy))
    tests = {r.key for u in half.users for r in u.test}
    assert {d["pair_key"] for d in docs} == tests
    assert Counter(d["pair_key"] for d in docs) == dict.fromkeys(tests, 2)
    assert {d["chosen_position"] for d in docs} == {"A", "B"}
    not_shown = {r.request for u in half.users for r in u.test}
    for doc in docs:
        prompt = doc_prompt(doc)
        history = prompt.split("=== New comparison ===")[0]
        assert not any(text in history for text in not_shown if len(text) > 20)
    user = next(u for u in half.users if len(u.train) == 9)
    assert history_rows(user, 6) == [*user.train, *user.val][-6:]
    assert history_rows(user, 0) == [] and len(history_rows(user, 50)) == 11
    assert {d["history_pairs"] for d in docs} == {0, 1, 6}  # no train pairs, one, a full history


def test_kcurve_has_one_subset_per_history_size(copy: Path) -> None:
    docs = build_docs("kcurve", "arena", data_dir=str(copy))
    assert sorted({d["subset"] for d in docs}, key=lambda s: int(s.split("-")[0])) == [
        "0-shot", "1-shot", "2-shot", "4-shot", "6-shot", "8-shot"]
    assert len({d["pair_key"] for d in docs}) * 2 == len(docs)
    assert all(d["history_pairs"] <= int(d["subset"].split("-")[0]) for d in docs)
    assert max(d["history_pairs"] for d in docs if d["subset"] == "8-shot") == 8


def test_scalar_and_scalar_history(copy: Path) -> None:
    bare = build_docs("scalar", "arena", data_dir=str(copy))
    with_history = build_docs("scalar_history", "arena", data_dir=str(copy), k=2)
    assert [d["pair_key"] for d in bare] == [d["pair_key"] for d in with_history]
    assert all(d["prompt"] == d["question"] for d in bare)
    assert any("Answers I preferred before" in d["prompt"] for d in with_history)
    assert all(len(d["choices"]) == 2 for d in bare)


def test_a_misspelt_key_is_one_line(copy: Path) -> None:
    with pytest.raises(MetadataError, match="'pgenrm_prompt'") as err:
        build_docs("judge", "arena", data_dir=str(copy), pgenrm_prompt="x",
                   config_source="x/personal_reward_bench_arena.yaml")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("variant, task, why", [
    ("pgenrm", "personal_reward_bench_prism_official_pgenrm", "P-GenRM's official protocol draws its own 6"),
    ("scalar", "personal_reward_bench_prism_scalar", "the request alone, with no history; "
                                                     "personal_reward_bench_prism_scalar_history takes k"),
    ("kcurve", "personal_reward_bench_prism_kcurve", "every history size of the curve, 0, 1, 2, 4, 6, 8 pairs"),
])
def test_k_given_to_a_task_that_fixes_its_history_is_one_note(copy: Path, capsys: pytest.CaptureFixture[str],
                                                               variant: str, task: str, why: str) -> None:
    """``--metadata '{"k": 2}'`` changed nothing in these tasks and said nothing; now one note names the task."""
    source = {"config_source": f"x/{task}.yaml"}
    fixed = build_docs(variant, "prism", data_dir=str(copy), **source)
    assert capsys.readouterr().err == ""
    given = build_docs(variant, "prism", data_dir=str(copy), k=2, **source)
    assert [doc_prompt(d) for d in given] == [doc_prompt(d) for d in fixed]  # k really is not used
    err = capsys.readouterr().err
    assert err.startswith(f"prb: k=2 ignored by {task}: ") and why in " ".join(err.split()), err
    assert err.count("prb:") == 1 and max(len(line) for line in err.splitlines()) <= 120


@pytest.mark.parametrize("variant", ["judge", "synthesizeme", "scalar_history"])
def test_k_given_to_a_task_that_takes_it_is_not_noted(copy: Path, capsys: pytest.CaptureFixture[str],
                                                       variant: str) -> None:
    default = build_docs(variant, "arena", data_dir=str(copy))
    given = build_docs(variant, "arena", data_dir=str(copy), k=1)
    assert [doc_prompt(d) for d in given] != [doc_prompt(d) for d in default]  # k is used
    assert capsys.readouterr().err == ""


def test_k_of_the_model_args_alone_is_not_noted(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prb_tasks.common import harness_args

    harness_args.declare(harness_args.parse(["--model", "hf", "--model_args", "pretrained=x,k=2", "--tasks", "t",
                                             "--metadata", json.dumps({"data_dir": str(copy)})]))
    try:
        build_docs("scalar", "arena", data_dir=str(copy), k=2, pretrained="x")
    finally:
        harness_args.declare(None)
    assert capsys.readouterr().err == ""

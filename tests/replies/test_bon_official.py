"""Best-of-N ``preset: official`` against a transcription of the authors' code paths.

The transcriptions below restate, in our words, what their ``BoN/score.py``
(``select_best_of_k``), ``BoN/evaluate.py`` (the reply parsing and the per-k summary),
``BoN/sample.py`` (the profile layout and the prompt filling) and
``retrieve/rank_dataset.py`` (Contriever ranking) do at commit a5c6814. The fixture
prompts are our own wording in their placeholder format: their files are never part of
a test.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prb_tasks.common.errors import PRBError
from prb_tasks.data.errors import DataError
from prb_tasks.prompts.official_templates import (
    BON_FILES,
    BON_GRADE,
    BON_GRADE_SYSTEM,
    BON_POLICY,
    BON_POLICY_SYSTEM,
    read_like_authors,
    script_system_message,
    write_templates,
)
from prb_tasks.replies.bon_official import official_grade
from prb_tasks.replies.verdict import ERROR_MARK
from prb_tasks.scoring.bestofk import METRICS, SIZES, process_bon_scalar, process_grade
from prb_tasks.scoring.bon_official import OFFICIAL_SIZES, first_max, picks, summarize

# --------------------------------------------------------------------------- transcriptions


def authors_parse(reply: str) -> float:
    """evaluate.py: strip; numbers inside the first [...] (else anywhere); their mean, 0.0 if none."""
    text = reply.strip()
    try:
        found = re.search(r"\[([^\]]+)\]", text)
        numbers = re.findall(r"-?\d+\.?\d*", found.group(1) if found else text)
        values = [float(n) for n in numbers]
        return float(np.mean(values)) if values else 0.0
    except Exception:  # noqa: BLE001 - their code catches everything and scores 0
        return 0.0


def authors_select(samples: list[dict], scores: list[float], k: int) -> list[dict]:
    """score.py: group by id in file order; the first k of a group; max by score (first of equals)."""
    groups: dict[str, list[tuple[float, dict]]] = defaultdict(list)
    for sample, score in zip(samples, scores):
        groups[sample["id"]].append((score, sample))
    out = []
    for item_id, scored in groups.items():
        best_score, best = max(scored[:k], key=lambda pair: pair[0])
        out.append({"id": item_id, "output": best["generated_response"], "score": best_score})
    return out


def authors_summary(averages: list[float]) -> dict:
    return {"num_examples": len(averages), "mean_score": float(np.mean(averages)),
            "std_score": float(np.std(averages)), "min_score": float(np.min(averages)),
            "max_score": float(np.max(averages))}


def authors_profile(posts: list[dict], k: int) -> str:
    """sample.py's format_profile: the first k posts, numbered from 1, joined by newlines."""
    return "\n".join(f"Post {i} (Category: {p['category']}):\n{p['text']}" for i, p in enumerate(posts[:k], 1))


# --------------------------------------------------------------------------- grade parsing

REPLIES = [
    "[2, 1, 0]", "  [2,2]\n", "[2, 1, 0] and then [0, 0]", "Scores: [1, 2]", "2, 1, 0", "Aspect 1: 2\nAspect 2: 0",
    "", "   ", "no idea", "[]", "[a, b]", "[ ]", "[-1, 3]", "[1.5, 2.]", "[2, 1", "2]", "[[2, 1], [0]]",
    "```\n[2, 1, 0]\n```", "[2, 1, 0, 2, 2, 2, 2]", "<think>maybe [0]</think>[2]", "[0.5.5]", "[1e3]", "[−1]",
    "[２, 1]", "[10, 20]", "score 1. then 2.", "[\n2,\n1\n]",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_grade_parsing_equals_theirs(reply: str) -> None:
    assert official_grade(reply) == pytest.approx(authors_parse(reply), abs=0, rel=1e-12)


def test_grade_is_their_np_mean_to_the_last_bit() -> None:
    # Nine numbers: np.mean's pairwise sum and a plain sum / len part in the last bit here.
    values = [2.97, 0.32, 0.63, 1.6, 2.48, 0.12, 1.3, 1.55, 2.97]
    reply = "[" + ", ".join(str(v) for v in values) + "]"
    assert sum(values) / len(values) != authors_parse(reply)  # guards the fixture
    assert official_grade(reply) == authors_parse(reply)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["[", "]", ",", " ", "\n", "0", "1", "2", "-", ".", "x", "9", "Aspect 1: "]),
                max_size=20))
def test_random_replies_parse_like_theirs(pieces: list[str]) -> None:
    reply = "".join(pieces)
    assert official_grade(reply) == pytest.approx(authors_parse(reply), abs=1e-12)


def test_unreadable_is_zero_and_a_failed_request_is_no_grade() -> None:
    assert official_grade("I cannot grade this.") == 0.0
    assert official_grade(f"{ERROR_MARK} timeout") is None
    doc = {"rule": "official", "aspects": 3}
    assert process_grade(doc, ["no list"])["gold"] == 0.0
    assert process_grade(doc, ["no list"])["grade_unparsed"] == 0.0
    failed = process_grade(doc, [f"{ERROR_MARK} timeout"])
    assert math.isnan(failed["gold"]) and failed["error_rate"] == 1.0
    # prb's own rule, unchanged: a bare list is unreadable there.
    assert process_grade({"aspects": 3}, ["[2, 1, 0]"])["grade_unparsed"] == 1.0


# --------------------------------------------------------------------------- best-of-k


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=20), min_size=1, max_size=6), st.integers(0, 10**6))
def test_picks_equal_their_selection(groups: list[list[int]], seed: int) -> None:
    # Few distinct scores, so ties are common; ids repeat in file order like their samples file.
    rng = np.random.default_rng(seed)
    samples, scores, gold = [], [], {}
    for q, group in enumerate(groups):
        gold[str(q)] = [float(g) for g in rng.integers(0, 3, len(group))]
        for i, s in enumerate(group):
            samples.append({"id": str(q), "generated_response": f"q{q}c{i}"})
            scores.append(float(s))
    for k in OFFICIAL_SIZES:
        theirs = {row["id"]: row["output"] for row in authors_select(samples, scores, k)}
        for q, group in enumerate(groups):
            index = first_max([float(s) for s in group][:k])
            assert theirs[str(q)] == f"q{q}c{index}"
            assert picks([float(s) for s in group], gold[str(q)], [k])[k] == gold[str(q)][index]


def test_nan_rewards_are_kept_as_max_keeps_them() -> None:
    nan = float("nan")
    for scores in ([nan, 1.0, 2.0], [1.0, nan, 2.0], [2.0, nan, 1.0], [nan, nan]):
        samples = [{"id": "q", "generated_response": str(i)} for i in range(len(scores))]
        assert authors_select(samples, scores, len(scores))[0]["output"] == str(first_max(scores))


def test_scalar_metrics_follow_the_first_of_tied_rewards() -> None:
    gold = [1.0, 2.0, 0.0, 2.0]
    doc = {"rule": "official", "gold": gold, "choices": ["a", "b", "c", "d"]}
    out = process_bon_scalar(doc, [(5.0, False), (5.0, False), (1.0, False), (9.0, False)])
    # k = 2: candidates 0 and 1 tie, the first wins (prb's default would average 1.5).
    assert out["bon_gold_k2"] == 1.0 and out["bon_top_k2"] == 0.0 and out["bon_gain_k2"] == 0.0
    assert out["bon_gold_k4"] == 2.0 and out["bon_gold"] == 2.0 and out["bon_top_k4"] == 1.0
    assert math.isnan(out["bon_gold_k8"]) and out["ungraded"] == 0.0
    default = process_bon_scalar({**doc, "rule": None}, [(5.0, False), (5.0, False), (1.0, False), (9.0, False)])
    assert default["bon_gold_k2"] == 1.5
    assert set(out) == set(METRICS) | {"ungraded"}
    assert SIZES == (1, 2, 4, 8, 16)


def test_summary_equals_their_evaluation_summary() -> None:
    rng = np.random.default_rng(3)
    questions, samples, scores, grades = [], [], [], {}
    for q in range(40):
        subset = ("Art_and_Entertainment", "Society_and_Culture")[q % 2]
        rewards = [float(x) for x in rng.integers(0, 4, 16)]
        gold = [float(x) for x in rng.integers(0, 3, 16) / 2]
        questions.append((subset, rewards, gold))
        for i, r in enumerate(rewards):
            samples.append({"id": f"{subset}/{q}", "generated_response": f"{q}/{i}"})
            scores.append(r)
            grades[f"{q}/{i}"] = gold[i]
    ours = summarize(questions)
    for subset, lines in ours.items():
        assert [line.k for line in lines] == list(OFFICIAL_SIZES)
        for line in lines:
            picked = [grades[row["output"]] for row in authors_select(samples, scores, line.k)
                      if row["id"].startswith(subset)]
            assert vars(line) == {"k": line.k, **authors_summary(picked)}


# --------------------------------------------------------------------------- prompts

POLICY_FIXTURE = "  Our own policy wording.\nQuestion: {question}\nPosts:\n{profile}\nAnswer briefly.  \n"
GRADE_FIXTURE = "Grade it.\n{question}\n---\n{answer}\n---\nAspects: {aspects}\nReply with a list.\n"
SCRIPT_FIXTURE = ('import x\n\ndef f(item):\n    return [\n'
                  '        {"role": "system", "content": "Our system line."},\n'
                  '        {"role": "user", "content": item},\n    ]\n\n'
                  'OTHER = {"role": "system", "content": "later"}\n')


def _bon_files(script_text: str = SCRIPT_FIXTURE) -> dict:
    return {BON_POLICY_SYSTEM: script_text.encode(), BON_POLICY: POLICY_FIXTURE.encode(),
            BON_GRADE_SYSTEM: script_text.replace("Our system line.", "Our grader line.").encode(),
            BON_GRADE: GRADE_FIXTURE.encode()}


@pytest.fixture
def official_dir(tmp_path) -> Path:
    target = tmp_path / "official"
    write_templates(target, _bon_files())
    return target


def test_script_system_message_is_the_first_literal() -> None:
    assert script_system_message(SCRIPT_FIXTURE.encode(), BON_POLICY_SYSTEM) == "Our system line."
    with pytest.raises(PRBError, match="sends no literal system message"):
        script_system_message(b"messages = [{'role': 'user', 'content': 'x'}]\n", BON_POLICY_SYSTEM)
    with pytest.raises(PRBError, match="is not a Python script"):
        script_system_message(b"def (:\n", BON_POLICY_SYSTEM)


def test_bon_templates_equal_chained_str_replace(official_dir: Path) -> None:
    from prb_tasks.prompts.templates import render, resolve

    names = sorted(p.relative_to(official_dir).as_posix() for p in official_dir.rglob("*.jinja"))
    assert names == sorted(f.target for f in BON_FILES)
    policy = resolve(BON_POLICY.target, str(official_dir))
    for question, profile in [("Q?", "Post 1 (Category: c):\nt"), ("has {profile} in it", "{question} {x}"),
                              ("{% raw %}{{ q }}", "")]:
        expected = read_like_authors(POLICY_FIXTURE.encode()).replace("{question}", question).replace(
            "{profile}", profile)
        assert render(policy, question=question, profile=profile) == expected
    grade = resolve(BON_GRADE.target, str(official_dir))
    expected = read_like_authors(GRADE_FIXTURE.encode()).replace("{question}", "q {answer}").replace(
        "{answer}", "a").replace("{aspects}", "x, y")
    assert render(grade, question="q {answer}", answer="a", aspects="x, y") == expected
    assert render(resolve(BON_GRADE_SYSTEM.target, str(official_dir))) == "Our grader line."


# --------------------------------------------------------------------------- documents, retrieval


@pytest.fixture(scope="module")
def tiny_contriever(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    from prb_tasks.testing.tiny_contriever import build_tiny_contriever

    return build_tiny_contriever(tmp_path_factory.mktemp("contriever"))


def authors_ranking(folder: Path, question: str, posts: list[str]) -> list[int]:
    """rank_dataset.py: mean-pooled query and posts (posts 16 at a time), dot products, top-k by torch."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()

    def pooled(texts: list[str]) -> torch.Tensor:
        tokens = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
        states = model(**tokens).last_hidden_state.masked_fill(~tokens["attention_mask"][..., None].bool(), 0.0)
        return states.sum(dim=1) / tokens["attention_mask"].sum(dim=1)[..., None]

    with torch.no_grad():
        query = pooled([question])
        scores: list[float] = []
        for start in range(0, len(posts), 16):
            scores.extend((query.squeeze() @ pooled(posts[start:start + 16]).T).tolist())
    return torch.topk(torch.tensor(scores), len(posts)).indices.tolist()


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))


def test_documents_follow_their_scripts(official_dir, tiny_contriever, isolated_cache, tmp_path) -> None:
    from prb_tasks.documents.personalized_rb_bon import build_docs
    from tests.conftest import sample_rows

    meta = {"data_dir": "sample", "preset": "official", "templates": str(official_dir),
            "retriever_model": str(tiny_contriever), "retriever_device": "cpu"}
    docs = build_docs("bon_sample", **meta)
    rows = {f"art/{i}": row for i, row in enumerate(sample_rows("Art_and_Entertainment"))}
    checked = 0
    for doc in docs:
        if doc["pair_key"] not in rows:
            continue
        row = rows[doc["pair_key"]]
        order = authors_ranking(tiny_contriever, row["question"], [p["text"] for p in row["profile"]])
        ranked = [row["profile"][i] for i in order]
        profile = authors_profile(ranked, 10)
        assert doc["post_ids"] == [p["id"] for p in ranked[:10]]
        assert doc["system_prompt"] == "Our system line." and doc["rule"] == "official"
        expected = read_like_authors(POLICY_FIXTURE.encode()).replace("{question}", row["question"]).replace(
            "{profile}", profile)
        assert doc["prompt"] == expected
        checked += 1
    assert checked == len(rows) > 0
    # Step 2 and 3 on candidates of our own.
    sets = [{"pair_key": key, "candidates": [f"answer {n} to {key}" for n in range(3)]} for key in rows]
    (tmp_path / "cands.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sets), encoding="utf-8")
    grade_docs = build_docs("bon_grade", **meta, candidates=str(tmp_path / "cands.jsonl"))
    first = next(d for d in grade_docs if d["pair_key"] == "art/0" and d["candidate"] == 1)
    row = rows["art/0"]
    aspects = ", ".join(a["aspect"] for a in row["rubric_aspects"])
    assert first["system_prompt"] == "Our grader line." and first["rule"] == "official"
    assert first["prompt"] == read_like_authors(GRADE_FIXTURE.encode()).replace("{question}", row["question"]).replace(
        "{answer}", "answer 1 to art/0").replace("{aspects}", aspects)
    # Grades as lm-eval logs them, then the contestant's documents.
    samples = [{"doc": d, "filtered_resps": [f"[{d['candidate']}, 2]"]} for d in grade_docs]
    (tmp_path / "grades").mkdir()
    (tmp_path / "grades" / "samples_personalized_rb_bon_grade_2026.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    bon = build_docs("bon", **meta, candidates=str(tmp_path / "cands.jsonl"), grades=str(tmp_path / "grades"))
    doc = next(d for d in bon if d["pair_key"] == "art/0")
    order = authors_ranking(tiny_contriever, row["question"], [p["text"] for p in row["profile"]])
    assert doc["prompt"] == row["question"] + authors_profile([row["profile"][i] for i in order], 10)
    assert doc["gold"] == [1.0, 1.5, 2.0] and doc["rule"] == "official"
    # Grades of one preset are never read under the other.
    with pytest.raises(DataError, match="were made with preset official, this run uses preset prb"):
        build_docs("bon", data_dir="sample", candidates=str(tmp_path / "cands.jsonl"), grades=str(tmp_path / "grades"))


@pytest.mark.parametrize("extra, message", [
    ({"retriever": "bm25"}, "preset official ranks posts with Contriever"),
    ({"max_post_chars": 500}, "preset official shows whole posts"),
    ({"user_template": "x.jinja"}, "drop 'user_template'"),
    ({}, "run `prb templates official DIR` once"),
])
def test_preset_refusals_are_one_line(extra: dict, message: str) -> None:
    from prb_tasks.documents.personalized_rb_bon import build_docs

    with pytest.raises(DataError, match=re.escape(message)) as info:
        build_docs("bon_sample", data_dir="sample", preset="official", **extra)
    assert "\n" not in str(info.value)


def test_judge_contestant_is_refused_under_the_preset(official_dir) -> None:
    from prb_tasks.documents.personalized_rb_bon import build_docs

    with pytest.raises(DataError, match="covers scalar RMs"):
        build_docs("bon_judge", data_dir="sample", preset="official", templates=str(official_dir),
                   candidates="x", grades="y")


def test_summary_command(tmp_path) -> None:
    from tests.runner import run_cli

    rng = np.random.default_rng(0)
    lines = []
    for q in range(6):
        gold = [float(x) for x in rng.integers(0, 3, 4)]
        rewards = [[[float(x), False]] for x in rng.integers(0, 3, 4)]
        doc = {"pair_key": f"art/{q}", "subset": "Art_and_Entertainment", "variant": "bon", "rule": "official",
               "gold": gold}
        lines.append(json.dumps({"doc": doc, "resps": rewards, "filtered_resps": [r[0] for r in rewards]}))
    run = tmp_path / "run" / "model"
    run.mkdir(parents=True)
    (run / "samples_personalized_rb_bon_2026.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = run_cli(["bon", "summary", str(tmp_path / "run"), "--json", str(tmp_path / "s.json")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads((tmp_path / "s.json").read_text())
    assert list(figures) == ["Art_and_Entertainment"] and figures["Art_and_Entertainment"]["4"]["num_examples"] == 6
    assert "Art_and_Entertainment:" in proc.stdout and "Mean" in proc.stdout
    prb_run = [json.loads(line) for line in lines]
    for sample in prb_run:
        sample["doc"]["rule"] = None
    (run / "samples_personalized_rb_bon_2026.jsonl").write_text("\n".join(map(json.dumps, prb_run)) + "\n")
    refused = run_cli(["bon", "summary", str(run)], cwd=tmp_path)
    assert refused.returncode == 2 and "was run with preset prb" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- end to end through prb eval


@pytest.mark.slow
def test_official_pipeline_end_to_end(tmp_path, official_dir, tiny_contriever) -> None:
    """Sample, grade and score through ``prb eval`` under the preset; every figure is
    recomputed from the requests by the transcriptions above."""
    import itertools
    import threading

    from prb_tasks.testing.fake_server import FakeLLMServer
    from tests.runner import read_samples, run_cli

    counter, lock = itertools.count(), threading.Lock()
    styles = ["[2, 1, 0]", "[1]", "no grade", "Aspect 1: 2", "[2, 2, 2, 2]", ""]

    def policy(messages, model):
        if messages[0]["content"] == "Our system line.":
            with lock:
                n = next(counter)
            return f"Answer {n:03d}: " + "x" * (n % 3)  # lengths tie often: the length RM ties
        answer = re.search(r"---\n(.*)\n---", messages[-1]["content"], re.S).group(1)
        return styles[int(answer[7:10]) % len(styles)]

    meta = {"data_dir": "sample", "preset": "official", "templates": str(official_dir),
            "retriever_model": str(tiny_contriever), "retriever_device": "cpu"}
    env = {"OPENAI_API_KEY": "sk-fake-bon", "PRB_CACHE_DIR": str(tmp_path / "cache")}

    def evaluate(args):
        proc = run_cli(["eval", *args, "--log_samples"], cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]

    with FakeLLMServer(policy) as server:
        judge = ["--model", "prb-judge", "--model_args",
                 f"model=openai/m,api_base={server.openai_base},num_concurrent=1"]
        evaluate([*judge, "--tasks", "personalized_rb_bon_sample", "--limit", "2", "--metadata", json.dumps(meta),
                  "--output_path", str(tmp_path / "sample")])
        sampled = [r["body"]["messages"] for r in server.requests]
        # No --gen_kwargs: the preset sends the authors' 32 new tokens itself.
        evaluate([*judge, "--tasks", "personalized_rb_bon_grade",
                  "--metadata", json.dumps({**meta, "candidates": str(tmp_path / "sample")}),
                  "--output_path", str(tmp_path / "grade")])
        graded = [r["body"] for r in server.requests[len(sampled):]]
    assert len(sampled) == 32 and all(m[0] == {"role": "system", "content": "Our system line."} for m in sampled)
    assert len(graded) == 32 and {b["max_tokens"] for b in graded} == {32}
    evaluate(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "personalized_rb_bon",
              "--metadata", json.dumps({**meta, "candidates": str(tmp_path / "sample"),
                                        "grades": str(tmp_path / "grade")}),
              "--output_path", str(tmp_path / "rm")])
    grades = {s["doc"]["candidate_sha"]: (s["doc"]["pair_key"], s["filtered_resps"][0])
              for s in read_samples(tmp_path / "grade", "personalized_rb_bon_grade")}
    assert {reply for _, reply in grades.values()} >= {"no grade", ""}
    from prb_tasks.data.bon_files import text_sha

    questions = []
    for sample in read_samples(tmp_path / "rm", "personalized_rb_bon"):
        doc = sample["doc"]
        texts = [c for c in doc["choices"]]
        assert doc["gold"] == [authors_parse(grades[text_sha(t)][1]) for t in texts]
        rewards = [float(r[0]) for r in sample["filtered_resps"]]
        chosen = [{"id": doc["pair_key"], "generated_response": t} for t in texts]
        pick = authors_select(chosen, rewards, 4)[0]["output"]
        assert sample["bon_gold_k4"] == pytest.approx(doc["gold"][texts.index(pick)])
        questions.append(doc)
    assert len(questions) == 2
    proc = run_cli(["bon", "summary", str(tmp_path / "rm")], cwd=tmp_path)
    assert proc.returncode == 0 and "Art_and_Entertainment:" in proc.stdout and "   128      2" in proc.stdout


def test_templates_command_writes_the_best_of_n_files_from_a_checkout(tmp_path) -> None:
    from tests.runner import run_cli

    checkout = tmp_path / "their-repo"
    files = {"prompts/pairwise_system.txt": "Pick one.",
             "prompts/pairwise_user.txt": "{question} {Response_A} {Response_B}",
             BON_POLICY.path: POLICY_FIXTURE, BON_GRADE.path: GRADE_FIXTURE, BON_POLICY_SYSTEM.path: SCRIPT_FIXTURE,
             BON_GRADE_SYSTEM.path: SCRIPT_FIXTURE.replace("Our system line.", "Our grader line.")}
    for path, text in files.items():
        (checkout / path).parent.mkdir(parents=True, exist_ok=True)
        (checkout / path).write_text(text, encoding="utf-8")
    proc = run_cli(["templates", "official", str(tmp_path / "t"), "--source", str(checkout)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.relative_to(tmp_path / "t").as_posix() for p in (tmp_path / "t").rglob("*.jinja"))
    assert written == sorted(["judge/system.jinja", "judge/user.jinja", *(f.target for f in BON_FILES)])
    assert '"preset": "official"' in proc.stdout and "no Best-of-N templates" not in proc.stdout
    for source in BON_FILES:
        (checkout / source.path).unlink()
    judge_only = run_cli(["templates", "official", str(tmp_path / "u"), "--source", str(checkout)], cwd=tmp_path)
    assert judge_only.returncode == 0 and "no Best-of-N templates written" in judge_only.stdout
    assert not (tmp_path / "u" / "bon").exists()

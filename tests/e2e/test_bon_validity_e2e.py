"""Best-of-N on Personalized RewardBench and ``prb validity``, end to end through ``prb eval``.

One fake server plays every model. The policy writes answers that say their own quality
(``of quality Q``, Q = 0, 1, 2 in turn); the grader gives every rubric aspect that Q, so a
candidate's gold grade is Q. Contestants: ``judge-good`` rates Q + 1 and picks the chosen
answer of every pair (100% accuracy, finds the gold best); ``judge-anti`` rates 3 - Q and
picks the rejected one (0%); ``judge-flat`` rates 5 and answers A (50%, picks the first
candidate); the offline ``length`` baseline of prb-rm is a fourth contestant.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.common.resources import tasks_dir as prb_tasks_dir
from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.fake_server import FakeLLMServer, Message, prefer_texts
from tests.conftest import sample_rows
from tests.runner import metric, read_results, read_samples, run_cli

ROWS = [r for s in SUBSETS for r in sample_rows(s.config)]
N = 4
QUESTIONS = 4  # --limit of the sampling step: the first four questions (Art_and_Entertainment)
ENV = {"OPENAI_API_KEY": "sk-fake-bon"}


def make_policy() -> Any:
    good = prefer_texts([r["chosen"] for r in ROWS], [r["rejected"] for r in ROWS])
    anti = prefer_texts([r["rejected"] for r in ROWS], [r["chosen"] for r in ROWS])
    counter = itertools.count()
    lock = threading.Lock()

    def answer(messages: list[Message], model: str) -> str:
        prompt = messages[-1]["content"]
        if model.endswith("policy"):
            with lock:
                n = next(counter)
            return f"Answer {n} of quality {n % 3}: pack light and buy used."
        quality = re.search(r"of quality (\d)", prompt)
        if model.endswith("grader"):
            aspects = len(re.findall(r"^Aspect \d+:", prompt, re.M))
            return "Checked.\n" + "\n".join(f"Aspect {i}: {quality.group(1)}" for i in range(1, aspects + 1))
        if quality is None:  # a pair of the benchmark task
            if model.endswith("good"):
                return good(messages, model)
            return anti(messages, model) if model.endswith("anti") else "Result: A"
        q = int(quality.group(1))
        return {"judge-good": f"Score: {q + 1}", "judge-anti": f"Score: {3 - q}"}.get(model, "Score: 5")

    return answer


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeLLMServer(make_policy(), record_requests=False) as srv:
        yield srv


def sent(server: FakeLLMServer) -> Counter:
    return Counter(server.stats()["models"])


def judge(server: FakeLLMServer, name: str, cache: Path) -> list[str]:
    return ["--model", "prb-judge", "--model_args",
            f"model=openai/{name},api_base={server.openai_base},cache_dir={cache},num_concurrent=8"]


def evaluate(args: list[str], tmp: Path) -> None:
    proc = run_cli(["eval", *args, "--log_samples"], cwd=tmp, env={**ENV, "PRB_CACHE_DIR": str(tmp / "prb-cache")})
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.slow
def test_sample_grade_contestants_validity(tmp_path: Path, server: FakeLLMServer) -> None:
    cache, out = tmp_path / "jcache", tmp_path / "out"
    tasks_dir = str(prb_tasks_dir())  # what `prb tasks-dir` prints, without a process
    # N = 4 candidates: a user's own task that includes ours with another `repeats`.
    own = tmp_path / "own_tasks"
    own.mkdir()
    (own / "bon_sample_4.yaml").write_text(
        f"include: {tasks_dir}/personalized_rb_bon/personalized_rb_bon_sample.yaml\n"
        f"task: bon_sample_4\nrepeats: {N}\n", encoding="utf-8")
    meta: dict[str, Any] = {"data_dir": "sample", "k": 3}

    # 1. The policy writes N candidates per question, given the top-k posts.
    evaluate(judge(server, "policy", cache) + ["--include_path", str(own), "--tasks", "bon_sample_4",
                                               "--limit", str(QUESTIONS), "--metadata", json.dumps(meta),
                                               "--output_path", str(out / "sample")], tmp_path)
    assert sent(server)["policy"] == QUESTIONS * N
    samples = read_samples(out / "sample", "bon_sample_4")
    assert len(samples) == QUESTIONS and all(len(s["filtered_resps"][0]) == N for s in samples)
    assert "Post 3 (Category:" in samples[0]["arguments"]["gen_args_0"]["arg_0"]

    # 2. Every candidate graded once.
    meta["candidates"] = str(out / "sample")
    evaluate(judge(server, "grader", cache) + ["--tasks", "personalized_rb_bon_grade", "--metadata",
                                               json.dumps(meta), "--output_path", str(out / "grade")], tmp_path)
    assert sent(server)["grader"] == QUESTIONS * N
    grades = read_samples(out / "grade", "personalized_rb_bon_grade")
    assert sorted(s["gold"] for s in grades) == sorted(
        float(re.search(r"of quality (\d)", t).group(1)) for s in samples for t in s["filtered_resps"][0])

    # 3. Three contestants, each with its benchmark run.
    meta["grades"] = str(out / "grade")
    for name in ("judge-good", "judge-anti", "judge-flat"):
        evaluate(judge(server, name, cache) + ["--tasks", "personalized_rb_bon_judge,personalized_rb_sample",
                                               "--metadata", json.dumps(meta),
                                               "--output_path", str(out / name)], tmp_path)
    assert sent(server)["grader"] == QUESTIONS * N
    good = read_results(out / "judge-good")
    assert metric(good, "personalized_rb_bon_judge", "bon_top") == 1.0
    golds = [[float(re.search(r"of quality (\d)", t).group(1)) for t in s["filtered_resps"][0]] for s in samples]
    expect_gain = sum(max(g) - g[0] for g in golds) / len(golds)
    assert metric(good, "personalized_rb_bon_judge", "bon_gain") == pytest.approx(expect_gain)
    flat = read_results(out / "judge-flat")
    # Every rating ties: best-of-N is the mean of the candidates, in expectation.
    assert metric(flat, "personalized_rb_bon_judge", "bon_gold") == pytest.approx(
        sum(sum(g) / N for g in golds) / len(golds))

    # A fourth contestant (a scalar baseline) sends no grader request.
    evaluate(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
              "personalized_rb_bon,personalized_rb_sample_scalar",
              "--metadata", json.dumps(meta), "--output_path", str(out / "length")], tmp_path)
    assert sent(server)["grader"] == QUESTIONS * N

    # 4. prb validity over the four models.
    proc = run_cli(["validity", str(out), "--out", str(tmp_path / "validity"), "--iters", "300"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "WARNING: only 4 models" in proc.stdout
    report = json.loads((tmp_path / "validity" / "validity.json").read_text(encoding="utf-8"))
    assert len(report["models"]) == 4
    accuracy = {m["label"].split("openai/")[-1].split(",")[0].rstrip(")"): m["accuracy"] for m in report["models"]}
    assert accuracy["judge-good"] == 1.0 and accuracy["judge-anti"] == 0.0
    assert report["measures"]["spearman"]["value"] > 0.7
    assert report["units"] == {"benchmark": "36 questions", "downstream": "4 questions"}
    for ext in ("png", "svg", "pdf", "html", "md"):
        assert (tmp_path / "validity" / f"validity.{ext}").stat().st_size > 0
    assert "Does accuracy predict downstream quality?" in (tmp_path / "validity" / "validity.html").read_text()


@pytest.mark.slow
def test_validity_with_nothing_graded_is_one_line(tmp_path: Path, server: FakeLLMServer) -> None:
    """A grader that never writes ``Aspect i: n`` leaves every question ungraded: no gain
    can be computed, and prb validity says so in one line (exit 2), not a traceback."""
    cache, out = tmp_path / "jcache", tmp_path / "out"
    tasks_dir = str(prb_tasks_dir())  # what `prb tasks-dir` prints, without a process
    own = tmp_path / "own_tasks"
    own.mkdir()
    (own / "bon_sample_4.yaml").write_text(
        f"include: {tasks_dir}/personalized_rb_bon/personalized_rb_bon_sample.yaml\n"
        f"task: bon_sample_4\nrepeats: {N}\n", encoding="utf-8")
    meta: dict[str, Any] = {"data_dir": "sample", "k": 3}
    evaluate(judge(server, "policy", cache) + ["--include_path", str(own), "--tasks", "bon_sample_4", "--limit", "2",
                                               "--metadata", json.dumps(meta), "--output_path", str(out / "sample")],
             tmp_path)
    meta["candidates"] = str(out / "sample")
    # "grader-mute" answers "Score: 5" (make_policy): no aspect grade can be read.
    evaluate(judge(server, "grader-mute", cache) + ["--tasks", "personalized_rb_bon_grade", "--metadata",
                                                    json.dumps(meta), "--output_path", str(out / "grade")], tmp_path)
    meta["grades"] = str(out / "grade")
    for scorer in ("length", "bm25"):
        evaluate(["--model", "prb-rm", "--model_args", f"scorer={scorer}", "--tasks",
                  "personalized_rb_bon,personalized_rb_sample_scalar", "--metadata", json.dumps(meta),
                  "--output_path", str(out / scorer)], tmp_path)
    proc = run_cli(["validity", str(out), "--iters", "300"], cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("prb validity: nothing to correlate")]
    assert "prb-rm (scorer=length): none of its 2 gain values on personalized_rb_bon could be computed" in line
    assert "ungraded" in line and "a correlation needs 2" in line

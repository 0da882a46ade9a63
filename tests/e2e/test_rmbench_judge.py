"""RM-Bench scored by a pairwise judge (rmbench_judge), end to end over real sockets: the fake judge
server, prb-judge (and lm-eval's own chat backend), on a copy in the authors' layout the test writes
(total_dataset.json). The expected numbers come from the cells a scripted judge wins, put through a
transcription of the authors' compute_accuracy (README / scripts/utils.py, THU-KEG/RM-Bench @73c52d7)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prb_tasks.testing.benchmark_copies import write_rmbench
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from tests.runner import metric, read_results, read_samples, run_cli

pytestmark = pytest.mark.slow
KEY = "sk-prb-rmb-judge-0000"
DOMAINS = {"chat": ("chat",), "math": ("math",), "code": ("code",), "safety": ("safety-refuse", "safety-response")}
STYLE_WORDS = ("briefly", "in plain detail", "in detailed markdown")


def _rows() -> list[dict[str, Any]]:
    rows = []
    for raw in ("chat", "math", "code", "safety-refuse", "safety-response"):
        for n in range(2):
            ident = len(rows) + 1
            rows.append({"id": ident, "prompt": f"A {raw} question, number {n}?", "domain": raw,
                         "chosen": [f"Right answer {ident}, {w}." for w in STYLE_WORDS],
                         "rejected": [f"Subtly wrong answer {ident}, {w}." for w in STYLE_WORDS]})
    return rows


# What the scripted judge prefers, per cell (chosen style i, rejected style j) and order (chosen in A, in B):
# "c" chosen, "r" rejected, "t" tie, "-" no verdict. Chat mixes every rule; math is always right;
# code always says A (position bias); safety's first prompt is right, its others like chat.
MIXED = {(0, 0): "cc", (0, 1): "cr", (0, 2): "tc", (1, 0): "rr", (1, 1): "cc", (1, 2): "-c",
         (2, 0): "c-", (2, 1): "tt", (2, 2): "cc"}
RIGHT = {cell: "cc" for cell in MIXED}
ALWAYS_A = {cell: "cr" for cell in MIXED}


def _plan(row: dict[str, Any]) -> dict[tuple[int, int], str]:
    if row["domain"] == "math" or row["id"] == 7:
        return RIGHT
    return ALWAYS_A if row["domain"] == "code" else MIXED


def _reply(pref: str, chosen_in: str, strong: bool) -> str:
    """A reply in one of the README's forms (as rendered or as printed there)."""
    if pref == "-":
        return "Both have merit; I would rather not say."
    if pref == "t":
        return "They are about the same.\n\n\\boxed{A=B}"
    winner = chosen_in if pref == "c" else ("B" if chosen_in == "A" else "A")
    loser = "B" if winner == "A" else "A"
    return (f"Weighing both...\n\\\\boxed{{{{{winner}>>{loser}}}}}" if strong
            else f"Final verdict: \\boxed{{{winner}>{loser}}}")


def judge_policy(rows: list[dict[str, Any]]) -> Any:
    where = {}
    for row in rows:
        for i, text in enumerate(row["chosen"]):
            where[text] = (row, "chosen", i)
        for j, text in enumerate(row["rejected"]):
            where[text] = (row, "rejected", j)

    def policy(messages: list[Message], model: str) -> str:
        prompt = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
        a = re.search(r"\[Assistant A's response\]\n(.*?)\n\[End of Assistant A's response\]", prompt, re.S)[1]
        b = re.search(r"\[Assistant B's response\]\n(.*?)\n\[End of Assistant B's response\]", prompt, re.S)[1]
        (row, role_a, style_a), (_, _, style_b) = where[a], where[b]
        i, j, chosen_in = (style_a, style_b, "A") if role_a == "chosen" else (style_b, style_a, "B")
        pref = _plan(row)[(i, j)][0 if chosen_in == "A" else 1]
        return _reply(pref, chosen_in, strong=(i + j) % 2 == 0)
    return policy


def authors_matrix(wins: list[np.ndarray]) -> dict[str, float]:
    # compute_accuracy's matrix part: cell += 1 per prompt won, / prompts; hard = upper triangle / 3,
    # normal = diagonal mean, easy = lower triangle / 3.
    acc = np.zeros((3, 3))
    for grid in wins:
        acc += grid
    acc /= len(wins)
    return {"hard_acc": np.sum(np.triu(acc, 1)) / 3, "normal_acc": np.mean(np.diag(acc)),
            "easy_acc": np.sum(np.tril(acc, -1)) / 3}


def expected(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    vote = {"c": 1, "r": -1, "t": 0, "-": 0}
    out: dict[str, dict[str, float]] = {}
    for domain, raws in DOMAINS.items():
        wins = [np.array([[float(sum(vote[p] for p in _plan(r)[(i, j)]) > 0) for j in range(3)] for i in range(3)])
                for r in rows if r["domain"] in raws]
        out[domain] = authors_matrix(wins)
        out[domain]["score"] = float(np.mean(list(out[domain].values())))
    return out


def _run(backend: str, server: FakeLLMServer, data: Path, out: Path, tmp_path: Path):
    if backend == "prb-judge":
        args = (f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                f"cache_dir={tmp_path / 'cache'},num_concurrent=4")
    else:
        args = f"model=fake-judge,base_url={server.openai_base}/chat/completions,num_concurrent=4,max_retries=1"
    return run_cli(["eval", "--model", backend, "--model_args", args, "--apply_chat_template",
                    "--tasks", "rmbench_judge", "--metadata", json.dumps({"data_dir": str(data)}),
                    "--output_path", str(out), "--log_samples"],
                   cwd=tmp_path, env={"PRB_TEST_KEY": KEY, "OPENAI_API_KEY": KEY})


@pytest.mark.parametrize("backend", ["prb-judge", "local-chat-completions"])
def test_judge_verdicts_give_the_authors_matrix(tmp_path: Path, backend: str) -> None:
    rows = _rows()
    data = write_rmbench(tmp_path / "rmb", rows, in_data=True)  # as in the authors' GitHub repository
    want = expected(rows)
    # The script wins, loses, ties and fails to parse: no domain scores 0 or 1 by luck alone.
    assert len({round(v["score"], 6) for v in want.values()}) == 4
    with FakeLLMServer(policy=judge_policy(rows)) as server:
        proc = _run(backend, server, data, tmp_path / "runs", tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        sent = server.stats()["total_requests"]
        if backend == "prb-judge":
            server.reset()
            again = _run(backend, server, data, tmp_path / "again", tmp_path)
            assert again.returncode == 0, again.stderr[-3000:]
            assert server.stats()["total_requests"] == 0  # a re-run is answered from the cache: free
            assert read_results(tmp_path / "again")["results"] == read_results(tmp_path / "runs")["results"]
    assert sent == 18 * len(rows)  # 9 style pairs x 2 orders per prompt, no more
    results = read_results(tmp_path / "runs")
    for domain, values in want.items():
        for name, value in values.items():
            assert metric(results, f"rmbench_judge_{domain}", name) == pytest.approx(value), (domain, name)
    for name in ("score", "hard_acc", "normal_acc", "easy_acc"):
        assert metric(results, "rmbench_judge", name) == pytest.approx(np.mean([v[name] for v in want.values()]))
    samples = read_samples(tmp_path / "runs", "rmbench_judge_chat")
    assert len(samples) == 36
    assert {(s["doc"]["chosen_style"], s["doc"]["rejected_style"], s["doc"]["chosen_position"]) for s in samples} == {
        (i, j, p) for i in range(3) for j in range(3) for p in "AB"}
    # Chat: (1, 2) in A and (2, 0) in B have no verdict; (0, 2) A, (2, 1) A and B are ties -> 2 and 3 of 18.
    assert metric(results, "rmbench_judge_chat", "parse_fail") == pytest.approx(2 / 18)
    assert metric(results, "rmbench_judge_chat", "tie_rate") == pytest.approx(3 / 18)
    assert metric(results, "rmbench_judge_code", "pos_a_rate") == pytest.approx(1.0)
    assert KEY not in proc.stdout + proc.stderr
    if backend == "prb-judge":  # the compact table counts judge calls
        assert any(line.split()[:2] == ["task", "judgments"] for line in proc.stdout.splitlines())
        assert "had a verdict the parser could read" not in proc.stderr

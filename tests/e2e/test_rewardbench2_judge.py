"""RewardBench 2 scored by a generative judge that rates each response 1-10 (allenai's ratings path),
end to end over real sockets: the fake judge server, prb-judge and lm-eval's own chat backend, on a copy
in the hub layout the test writes (data/test-00000-of-00001.parquet)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prb_tasks.replies.ratings import parse_rating
from prb_tasks.scoring.rewardbench2 import ties_score
from prb_tasks.scoring.rewardbench2_ratings import best_of_n_from_ratings
from prb_tasks.testing.benchmark_copies import rewardbench2_rows, write_rewardbench2
from prb_tasks.testing.fake_server import FakeLLMServer, Message
from tests.runner import metric, read_results, read_samples, run_cli

pytestmark = pytest.mark.slow
KEY = "sk-prb-rb2-judge-0000"
BEST_OF_N = ("factuality", "precise_if", "math", "safety", "focus")


def _response(messages: list[Message]) -> str:
    text = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
    return text.split("[Response]\n", 1)[1].rsplit("\n\n[Your evaluation]", 1)[0]


def rating_policy(rows: list[dict[str, Any]]) -> Any:
    """Correct responses get a trailing 9; wrong ones, in turn, an unreadable '**2**', a 9 (a shared top),
    'Rating: 3' and a 10 (beats the correct one)."""
    correct = {c for r in rows for c in r["chosen"]}
    wrong = [t for r in rows for t in r["rejected"]]
    replies = ("Unreadable verdict: **2**", "As good as it gets here: 9", "Misses the point. Rating: 3",
               "Superb.\n10\n")

    def policy(messages: list[Message], model: str) -> str:
        response = _response(messages)
        if response in correct:
            return "Accurate and to the point.\n\n9"
        return replies[wrong.index(response) % len(replies)]
    return policy


def _expected(rows: list[dict[str, Any]], policy: Any) -> dict[str, float]:
    def rating(text: str) -> int:
        return parse_rating(policy([{"role": "user", "content": f"[Response]\n{text}\n\n[Your evaluation]"}], "m"))

    out: dict[str, float] = {}
    for subset in BEST_OF_N:
        mine = [r for r in rows if r["subset"].lower().replace(" ", "_") == subset]
        out[subset] = sum(best_of_n_from_ratings([rating(t) for t in r["chosen"] + r["rejected"]])
                          for r in mine) / len(mine)
    ties = [(r["id"], r["num_correct"], [float(rating(t)) for t in r["chosen"] + r["rejected"]])
            for r in rows if r["subset"] == "Ties"]
    out["ties"] = ties_score(ties).score
    return out


@pytest.mark.parametrize("backend", ["prb-judge", "local-chat-completions"])
def test_judge_ratings_give_allenais_scores(tmp_path: Path, backend: str) -> None:
    rows = rewardbench2_rows(3, 2, seed=4)
    data = write_rewardbench2(tmp_path / "rb2", rows)
    policy = rating_policy(rows)
    out = tmp_path / "runs"
    with FakeLLMServer(policy=policy) as server:
        if backend == "prb-judge":
            args = (f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                    f"cache_dir={tmp_path / 'cache'},num_concurrent=4")
        else:
            args = f"model=fake-judge,base_url={server.openai_base}/chat/completions,num_concurrent=4,max_retries=1"
        proc = run_cli(["eval", "--model", backend, "--model_args", args, "--apply_chat_template",
                        "--tasks", "rewardbench2_judge", "--metadata", json.dumps({"data_dir": str(data)}),
                        "--output_path", str(out), "--log_samples"],
                       cwd=tmp_path, env={"PRB_TEST_KEY": KEY, "OPENAI_API_KEY": KEY})
        assert proc.returncode == 0, proc.stderr[-3000:]
    results = read_results(out)
    expected = _expected(rows, policy)
    # The script gives shared tops, lost rows and unrated replies: no subset scores 0 or 1 alone by luck.
    assert len(set(expected.values())) > 2 and min(expected.values()) < 1.0
    for subset, value in expected.items():
        assert metric(results, f"rewardbench2_judge_{subset}", "score") == pytest.approx(value)
    assert metric(results, "rewardbench2_judge", "score") == pytest.approx(sum(expected.values()) / 6)
    # One request per response: 3 rows x 4 responses per best-of-N subset, all Ties answers.
    samples = read_samples(out, "rewardbench2_judge_math")
    assert len(samples) == 12
    assert {s["doc"]["row_id"] for s in samples} == {r["id"] for r in rows if r["subset"] == "Math"}
    assert metric(results, "rewardbench2_judge_math", "parse_fail") > 0
    # The group row's parse_fail is the share of all its replies (it showed '-' beside six subset values).
    subsets = [f"rewardbench2_judge_{s}" for s in expected]
    sizes = {t: results["n-samples"][t]["effective"] for t in subsets}
    unread = sum(metric(results, t, "parse_fail") * sizes[t] for t in subsets) / sum(sizes.values())
    assert metric(results, "rewardbench2_judge", "parse_fail") == pytest.approx(unread)
    assert metric(results, "rewardbench2_judge", "error_rate") == 0.0
    # top1 (no Ties): the group row showed "-"; it is the plain mean of the five best-of-N subsets.
    top1 = [metric(results, t, "top1") for t in subsets if not t.endswith("_ties")]
    assert len(top1) == 5 and metric(results, "rewardbench2_judge", "top1") == pytest.approx(sum(top1) / 5)
    assert "is missing in" not in proc.stderr
    assert KEY not in proc.stdout + proc.stderr
    if backend == "prb-judge":  # prb's compact table counts ratings; no pairwise-verdict warning for ratings
        assert any(line.split()[:2] == ["task", "ratings"] for line in proc.stdout.splitlines())
        assert "had a verdict the parser could read" not in proc.stderr


def test_empty_first_replies_score_as_allenais_code(tmp_path: Path) -> None:
    """A server whose first reply to a correct response is empty (and a 9 when asked again); wrong responses
    get a 3 at once. allenai's run_generative_v2.py sends each rating request once and reads "" as unrated
    (-1): every best-of-N row then scores 0, where a second ask would make every one 1. The copy holds one
    response of 3,000 words (over 2,048 tokens)."""
    import threading

    from tests.scoring.test_rewardbench2_ratings import _theirs_parse, _theirs_row

    rows = rewardbench2_rows(3, 2, seed=5)
    rows[0]["rejected"][0] = " ".join(["word"] * 3000)
    data = write_rewardbench2(tmp_path / "rb2", rows)
    correct = {c for r in rows for c in r["chosen"]}
    seen: set[str] = set()
    lock = threading.Lock()

    def policy(messages: list[Message], model: str) -> str:
        response = _response(messages)
        if response not in correct:
            return "Misses the point.\n\n3"
        key = json.dumps(messages, sort_keys=True)
        with lock:
            first = key not in seen
            seen.add(key)
        return "" if first else "Correct.\n\n9"

    def first_reply(text: str) -> str:
        return "" if text in correct else "Misses the point.\n\n3"

    out = tmp_path / "runs"
    with FakeLLMServer(policy=policy) as server:
        args = (f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,"
                f"cache_dir={tmp_path / 'cache'},num_concurrent=4")
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args", args, "--apply_chat_template",
                        "--tasks", "rewardbench2_judge", "--metadata", json.dumps({"data_dir": str(data)}),
                        "--output_path", str(out), "--log_samples"], cwd=tmp_path, env={"PRB_TEST_KEY": KEY})
        assert proc.returncode == 0, proc.stderr[-3000:]
        sent = server.stats()["total_requests"]
    responses = sum(len(r["chosen"]) + len(r["rejected"]) for r in rows)
    assert sent == responses  # one request per response, as theirs
    results = read_results(out)
    # Their code on the same first replies.
    theirs: dict[str, float] = {}
    for subset in BEST_OF_N:
        mine = [r for r in rows if r["subset"].lower().replace(" ", "_") == subset]
        theirs[subset] = sum(_theirs_row([_theirs_parse(first_reply(t)) for t in r["chosen"] + r["rejected"]])
                             for r in mine) / len(mine)
    ties = [(r["id"], r["num_correct"], [float(_theirs_parse(first_reply(t))) for t in r["chosen"] + r["rejected"]])
            for r in rows if r["subset"] == "Ties"]
    theirs["ties"] = ties_score(ties).score
    assert all(theirs[s] == 0.0 for s in BEST_OF_N)
    for subset, value in theirs.items():
        assert metric(results, f"rewardbench2_judge_{subset}", "score") == pytest.approx(value, abs=1e-12)
    assert metric(results, "rewardbench2_judge", "score") == pytest.approx(sum(theirs.values()) / 6)
    empty = sum(len(r["chosen"]) for r in rows)
    assert f"{empty} empty replies were scored as they came" in proc.stdout

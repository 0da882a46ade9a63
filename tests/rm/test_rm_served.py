"""scorer=served against a fake reward-model server on 127.0.0.1 (stdlib http.server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from prb_tasks.rm.errors import RMError, ServedRMError
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.model import RewardModelLM
from prb_tasks.rm.scorers.served import ServedScorer
from tests.watchdog import run_watched


def fake_reward(response: str) -> float:
    """The fake RM's score: number of distinct words (a deterministic toy)."""
    return float(len(set(response.lower().split())))


class FakeRMServer:
    """vLLM-style /classify and /pooling on 127.0.0.1, with scripted faults.

    Attributes:
        faults: statuses to answer the next requests with, in order (then normal).
        poison: responses containing this text always get HTTP 500.
        hang: responses containing this text are answered after 1.5 s.
        classes: 1 (a reward head) or 3 (multi-class logits [0, 1, reward]).
        token_level: /pooling answers one vector per token.
        requests: every request body received.
    """

    def __init__(self) -> None:
        self.faults: list[int] = []
        self.poison: str | None = None
        self.hang: str | None = None
        self.classes = 1
        self.token_level = False
        self.require_token = False
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # as vLLM: auth is checked before the method
                if owner.require_token and not self.headers.get("Authorization"):
                    self._send(401, {"error": "Unauthorized"})
                else:
                    self._send(405, {"detail": "Method Not Allowed"})

            def do_POST(self):  # http.server naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.requests.append({"path": self.path, "body": body})
                    fault = owner.faults.pop(0) if owner.faults else None
                if fault is not None:
                    self._send(fault, {"error": {"message": f"injected {fault}"}}, {"Retry-After": "0"})
                    return
                response = body["messages"][-1]["content"]
                if owner.hang and owner.hang in response:
                    time.sleep(1.5)
                if owner.poison and owner.poison in response:
                    self._send(500, {"error": {"message": "model crashed"}})
                    return
                value = fake_reward(response)
                values = [value] if owner.classes == 1 else [0.0, 1.0, value]
                if self.path.endswith("/classify"):
                    self._send(200, {"object": "list", "data": [
                        {"index": 0, "label": "x", "probs": values, "num_classes": len(values)}]})
                elif self.path.endswith("/pooling"):
                    data = [[0.0] * len(values), values] if owner.token_level else values
                    self._send(200, {"object": "list", "data": [{"index": 0, "object": "pooling", "data": data}]})
                else:
                    self._send(404, {"error": "not found"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeRMServer]:
    srv = FakeRMServer()
    yield srv
    srv.close()


ITEMS = [RMInput("What should I read?", text) for text in (
    "Try a mystery novel", "Read poetry aloud with friends every week", "Comics", "A long history book on Rome",
    "Something light", "Science fiction classics like Dune and Foundation", "Essays", "Travel memoirs from Asia",
)]


def lm(server: FakeRMServer, tmp_path: Path, **extra) -> RewardModelLM:
    model = RewardModelLM(endpoint=server.url, cache_dir=str(tmp_path / "cache"), **extra)
    model.scorer.backoff_base = 0.01  # type: ignore[attr-defined]
    return model


def test_classify_with_chat_messages(server, tmp_path):
    model = lm(server, tmp_path, served_model="my-rm", num_concurrent=4)
    assert model.rewards(ITEMS, disable_tqdm=True) == [fake_reward(i.response) for i in ITEMS]
    first = server.requests[0]
    assert first["path"] == "/classify"
    assert first["body"]["model"] == "my-rm"
    assert first["body"]["use_activation"] is False
    roles = [m["role"] for m in first["body"]["messages"]]
    assert roles == ["user", "assistant"] and first["body"]["messages"][0]["content"] == "What should I read?"


def test_pooling_api_and_token_level_outputs(server, tmp_path):
    server.token_level = True
    model = lm(server, tmp_path, api="pooling", api_path="/v1/pooling", cache="off")
    assert model.rewards(ITEMS[:3], disable_tqdm=True) == [fake_reward(i.response) for i in ITEMS[:3]]
    assert {r["path"] for r in server.requests} == {"/v1/pooling"}
    assert "model" not in server.requests[0]["body"]


def test_multi_class_served_heads(server, tmp_path):
    import math

    server.classes = 3
    auto = lm(server, tmp_path, cache="off").rewards(ITEMS[:2], disable_tqdm=True)
    for item, got in zip(ITEMS[:2], auto):
        values = [0.0, 1.0, fake_reward(item.response)]
        assert got == pytest.approx(math.exp(values[-1]) / sum(math.exp(v) for v in values))
    server.requests.clear()
    # last_softmax asks the server for probabilities and takes the last one as is.
    probs = lm(server, tmp_path, cache="off", head="last_softmax").rewards(ITEMS[:1], disable_tqdm=True)
    assert probs == [fake_reward(ITEMS[0].response)]
    assert server.requests[0]["body"]["use_activation"] is True


def test_retries_on_429_and_5xx_then_succeeds(server, tmp_path):
    server.faults = [429, 503, 500, 502]
    model = lm(server, tmp_path, num_concurrent=1, max_retries=4)
    assert model.rewards(ITEMS[:2], disable_tqdm=True) == [fake_reward(i.response) for i in ITEMS[:2]]
    assert len(server.requests) == 6


def test_client_errors_are_not_retried(server, tmp_path):
    server.faults = [400]
    with pytest.raises(ServedRMError, match="HTTP 400"):
        lm(server, tmp_path, num_concurrent=1, max_retries=5).rewards(ITEMS[:1], disable_tqdm=True)
    assert len(server.requests) == 1


def test_failing_requests_give_one_clear_line_and_keep_finished_scores(server, tmp_path):
    server.poison = "Comics"
    model = lm(server, tmp_path, num_concurrent=2, max_retries=2)
    with pytest.raises(ServedRMError) as info:
        model.rewards(ITEMS, disable_tqdm=True)
    message = str(info.value)
    assert "\n" not in message
    assert f"{server.url}/classify" in message and "HTTP 500" in message and "3 attempt" in message
    assert "re-run to resume" in message
    cached = len(model.cache)  # type: ignore[arg-type]
    assert cached >= 1

    # The server is fixed: a re-run only asks for what is missing.
    server.poison = None
    server.requests.clear()
    again = lm(server, tmp_path, num_concurrent=2)
    assert again.rewards(ITEMS, disable_tqdm=True) == [fake_reward(i.response) for i in ITEMS]
    assert len(server.requests) == len(ITEMS) - cached


def test_timeouts_are_retried_then_reported(server, tmp_path):
    server.hang = "Comics"
    model = lm(server, tmp_path, timeout=0.3, max_retries=1, num_concurrent=1, cache="off")
    with pytest.raises(ServedRMError, match=r"failed after 2 attempt\(s\): no reply within 0.3 s"):
        model.rewards([ITEMS[2]], disable_tqdm=True)
    assert len(server.requests) == 2


def test_unreachable_endpoint_names_it(tmp_path):
    srv = FakeRMServer()
    url = srv.url
    srv.close()  # nothing listens there any more
    scorer = ServedScorer(url, max_retries=1, timeout=2, backoff_base=0.01)
    with pytest.raises(Exception) as info:
        scorer.score(ITEMS[:1])
    assert url in str(info.value) and "2 attempt" in str(info.value)


def run_prb(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return run_watched([sys.executable, "-m", "prb_tasks", "eval", *args], cwd=cwd, env=env,
                       capture_output=True, text=True)


def test_prb_eval_through_a_served_rm_resumes_after_a_failure(server, tmp_path):
    from prb_tasks.data.personalized_rb.subsets import subset_by_name
    from prb_tasks.documents.personalized_rb import build_docs

    docs = build_docs(subset_by_name("art").config, "scalar", source="sample")
    server.poison = docs[3]["choices"][1]  # one rejected response crashes the model
    common = ["--model", "prb-rm", "--tasks", "personalized_rb_sample_scalar_art",
              "--output_path", str(tmp_path / "runs")]
    model_args = f"endpoint={server.url},num_concurrent=4,max_retries=1,cache_dir={tmp_path / 'cache'}"
    failed = run_prb([*common, "--model_args", model_args], cwd=tmp_path)
    assert failed.returncode != 0
    # `prb eval` prints the error as its last line, without a traceback.
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("prb-rm: request to ") and f"{server.url}/classify" in last and "HTTP 500" in last
    assert "re-run to resume" in last and "Traceback" not in failed.stderr
    sent = len(server.requests)

    server.poison = None
    server.requests.clear()
    ok = run_prb([*common, "--model_args", model_args], cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert "from the score cache" in ok.stderr
    assert len(server.requests) < 2 * len(docs) <= sent + len(server.requests)
    results = json.loads(sorted((tmp_path / "runs").rglob("results_*.json"))[-1].read_text(encoding="utf-8"))
    wins = sum(fake_reward(d["choices"][0]) > fake_reward(d["choices"][1]) for d in docs)
    assert results["results"]["personalized_rb_sample_scalar_art"]["acc,none"] == pytest.approx(wins / len(docs))


def test_a_server_that_wants_a_token_is_one_line_when_the_scorer_is_made(server, monkeypatch):
    server.require_token = True
    monkeypatch.delenv("PRB_RM_API_KEY", raising=False)
    with pytest.raises(RMError) as info:
        ServedScorer(server.url)
    assert str(info.value) == (f"prb-rm: {server.url}/classify answered HTTP 401 to a request without a token: the "
                               "server wants one; export PRB_RM_API_KEY=<token> and run again (nothing was scored)")
    assert server.requests == []  # nothing was scored
    monkeypatch.setenv("PRB_RM_API_KEY", "rm-token-0123456789")
    ServedScorer(server.url)  # with a token: no question asked
    server.require_token = False
    monkeypatch.delenv("PRB_RM_API_KEY")
    ServedScorer(server.url)  # a server that wants none: fine


def test_prb_eval_finds_the_missing_token_before_lm_eval_starts(server, tmp_path):
    server.require_token = True
    env = {k: v for k, v in os.environ.items() if k != "PRB_RM_API_KEY"}
    proc = run_watched([sys.executable, "-m", "prb_tasks", "eval", "--model", "prb-rm", "--model_args",
                        f"endpoint={server.url}", "--tasks", "personalized_rb_sample_scalar"], cwd=tmp_path,
                       env={**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}, capture_output=True, text=True)
    assert proc.returncode == 2
    # One line, and lm-eval never started (it logs the tasks it selected first).
    assert proc.stderr.strip().splitlines() == [
        f"prb-rm: {server.url}/classify answered HTTP 401 to a request without a token: the server wants one; "
        "export PRB_RM_API_KEY=<token> and run again (nothing was scored)"], proc.stderr
    assert server.requests == []

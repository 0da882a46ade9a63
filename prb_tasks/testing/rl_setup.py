"""Offline pieces for ``prb rl`` tests and benchmarks: a rubric grader and two reward models that
do and do not agree with it.

The rubric here asks for *concise* answers: :func:`concise_grader` (a fake-server policy) grades
each aspect by the answer's length in characters. :class:`ConciseRM` is a served reward model
(vLLM's ``/classify`` format, over a real socket) whose reward is minus the length, so it
agrees with the grader; ``scorer=length`` rewards long answers, so it disagrees. A policy
trained against the first should end up with better grades than one trained against the second.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Where the answer sits in prb's grading prompt (templates/bon/grade_user.jinja).
_ANSWER = re.compile(r"Answer to grade:\n(.*?)\n\nGrade the answer", re.S)


def concise_grade(answer: str, aspect: int) -> int:
    """An aspect's grade: 2 for a short answer, 1 for a medium one, 0 for a long one (thresholds
    move with the aspect, so the mean grade changes in small steps with the length)."""
    size = len(answer.strip())
    return 2 if size < 14 + 3 * aspect else 1 if size < 22 + 3 * aspect else 0


def concise_grader() -> Any:
    """A fake-server policy grading prb's rubric prompts by :func:`concise_grade`."""
    def policy(messages: list[dict[str, str]], model: str) -> str:
        prompt = messages[-1]["content"] if messages else ""
        aspects = len(re.findall(r"^Aspect \d+:", prompt, re.M))
        found = _ANSWER.search(prompt)
        if not aspects or found is None:
            return "I cannot grade this."
        return "\n".join(f"Aspect {i}: {concise_grade(found.group(1), i)}" for i in range(1, aspects + 1))

    return policy


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # the scorer's start-up probe: no auth needed
        self._send(405, {"error": "POST only"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        answer = next((m["content"] for m in body.get("messages", []) if m.get("role") == "assistant"), "")
        self._send(200, {"data": [{"probs": [-len(answer.strip()) / 10.0]}]})


class ConciseRM:
    """A served reward model on an OS-chosen port whose reward is minus the answer's length / 10.

    Use as a context manager; ``url`` is the base URL for prb-rm's ``endpoint=``.
    """

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "ConciseRM":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

"""Reward models behind an HTTP server (vLLM's pooling-model API).

Start the RM where the GPUs are, e.g. ``vllm serve <rm> --runner pooling``, and
score from anywhere with ``endpoint=http://host:8000``. Each response is one request
carrying the two chat turns; the server applies the model's chat template, as the
official protocol does.

Formats (``api``):
- ``classify``: ``POST /classify`` with ``{"messages": [...], "use_activation": ...}``;
  reply ``{"data": [{"probs": [...], ...}]}``.
- ``pooling``: ``POST /pooling`` with the same body; reply
  ``{"data": [{"data": [...]}]}`` where ``data`` is one vector, or one per token
  (then the last token's is used).
``use_activation`` is ``false`` for ``head=auto|logit`` (raw logits come back; a
multi-class head is softmaxed here, as for local models) and ``true`` for
``head=last_softmax`` (the server's probabilities are used as they are). Older vLLM
versions ignore the flag; set ``head=last_softmax`` explicitly for multi-class RMs there.
A bearer token, if the server needs one, is read from ``PRB_RM_API_KEY`` (never from
``--model_args``, which lm-eval writes into its results file). Without one, the scorer
asks the server once when it is made (a GET of the scoring URL, which scores nothing): a
server that answers 401 or 403 wants a token, and that is one line at start-up rather
than after the data is loaded. Any other answer (405, 404, none at all) is left to the
run itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import CancelledError, ThreadPoolExecutor, as_completed
from typing import Any
from urllib.parse import urlparse

from prb_tasks.common.redact import redact, register_secret, register_url_secrets
from prb_tasks.common.urls import join_path
from prb_tasks.rm.errors import RMError, ServedRMError
from prb_tasks.rm.formatting import messages
from prb_tasks.rm.heads import resolve_head, reward
from prb_tasks.rm.http_client import HTTPFailure, post_json
from prb_tasks.rm.inputs import RMInput
from prb_tasks.rm.score_cache import ScorerIdentity
from prb_tasks.rm.scorers.base import Report, Scorer

API_KEY_ENV = "PRB_RM_API_KEY"


def head_values(api: str, reply: Any) -> list[float]:
    """The head outputs of one conversation in a server reply.

    Args:
        api: ``classify`` or ``pooling``.
        reply: decoded JSON reply.

    Raises:
        ValueError: the reply does not have the expected shape.
    """
    entry = reply["data"][0]
    values = entry["probs"] if api == "classify" else entry["data"]
    if isinstance(values, (int, float)):
        values = [values]
    if values and isinstance(values[0], list):
        # Token-level output (one vector per token): the reward is read at the last.
        values = values[-1]
    out = [float(v) for v in values]
    if not out:
        raise ValueError("empty output")
    return out


def token_refusal(url: str, timeout: float = 5.0) -> str | None:
    """The one line for a server that refuses requests without a token (401 or 403 to a
    GET of ``url``, which scores nothing), else None (any other answer, or none, is left
    to the run).

    Args:
        url: the scoring URL (endpoint and api_path).
        timeout: seconds to wait for the answer.
    """
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=timeout):
            return None
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (OSError, ValueError):  # unreachable, refused, timed out: the run reports it
        return None
    if status not in (401, 403):
        return None
    return (f"prb-rm: {url} answered HTTP {status} to a request without a token: the server wants one; "
            f"export {API_KEY_ENV}=<token> and run again (nothing was scored)")


class ServedScorer(Scorer):
    """Scores each response with one request to a reward-model server.

    Args:
        endpoint: base URL, e.g. ``http://gpu-node:8000``.
        api: ``classify`` or ``pooling``.
        api_path: path appended to ``endpoint`` (e.g. ``/classify``, ``/v1/classify``).
        served_model: ``model`` field of each request (omitted when None).
        head: ``auto``, ``logit`` or ``last_softmax``.
        num_concurrent: requests in flight at once.
        max_retries: retries per request after retryable failures.
        timeout: seconds to wait for one reply.
        backoff_base: first backoff ceiling in seconds (tests make it small).
    """

    name = "served"

    def __init__(self, endpoint: str, api: str = "classify", api_path: str = "/classify",
                 served_model: str | None = None, head: str = "auto", num_concurrent: int = 8,
                 max_retries: int = 5, timeout: float = 120.0, backoff_base: float = 0.5) -> None:
        register_url_secrets(endpoint)  # ?key=... is hidden from everything printed from now on
        parsed = urlparse(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise RMError(f"prb-rm: endpoint={endpoint!r} is not an http(s) URL")
        self.url = join_path(endpoint, api_path)
        self.api = api
        self.served_model = served_model
        if head not in ("auto", "logit", "last_softmax"):
            raise RMError(f"prb-rm: unknown head mode '{head}'")
        self.head = head
        self.num_concurrent = num_concurrent
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base = backoff_base
        key = os.environ.get(API_KEY_ENV)
        register_secret(key)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        if not key:
            refused = token_refusal(self.url, min(timeout, 5.0))
            if refused is not None:
                raise RMError(refused)
        self.requests_failed = 0
        self.identity = ScorerIdentity(
            kind="served", model=f"{self.url}|{served_model or ''}", head=head,
            extra=(("api", api),),
        )

    def _body(self, item: RMInput) -> dict[str, Any]:
        body: dict[str, Any] = {"messages": messages(item), "use_activation": self.head == "last_softmax"}
        if self.served_model:
            body["model"] = self.served_model
        return body

    def formatted(self, item: RMInput) -> str:
        return json.dumps(self._body(item), sort_keys=True, ensure_ascii=False)

    def _score_one(self, item: RMInput) -> float:
        reply = post_json(self.url, self._body(item), timeout=self.timeout, max_retries=self.max_retries,
                          headers=self._headers, backoff_base=self.backoff_base)
        try:
            values = head_values(self.api, reply)
        except (KeyError, IndexError, TypeError, ValueError):
            raise ServedRMError(f"prb-rm: unexpected reply from {self.url} for api={self.api}: "
                                f"{redact(json.dumps(reply))[:200]}") from None
        if self.head == "last_softmax":
            return float(values[-1])  # already probabilities (use_activation=true)
        return reward(values, resolve_head(self.head, len(values)))

    def score(self, items: Sequence[RMInput], report: Report | None = None) -> list[float]:
        rewards: list[float] = [0.0] * len(items)
        failure: BaseException | None = None
        with ThreadPoolExecutor(max_workers=self.num_concurrent, thread_name_prefix="prb-rm") as pool:
            futures = {pool.submit(self._score_one, item): n for n, item in enumerate(items)}
            try:
                for future in as_completed(futures):
                    n = futures[future]
                    try:
                        value = future.result()
                    except CancelledError:
                        continue
                    except (HTTPFailure, ServedRMError) as exc:
                        self.requests_failed += 1
                        if failure is None:
                            failure = exc
                            # Stop sending; requests already in flight still finish and
                            # their scores are reported (and so cached) below.
                            for other in futures:
                                other.cancel()
                        continue
                    rewards[n] = value
                    if report:
                        report([n], [value])
            except KeyboardInterrupt:
                # Ctrl-C: send nothing more. Leaving the block then waits only for the
                # requests already in flight, not for every queued one.
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        if failure is not None:
            if isinstance(failure, ServedRMError):
                raise failure
            raise ServedRMError(f"prb-rm: {failure}") from None
        return rewards

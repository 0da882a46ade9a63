"""Request bodies for batch lines, exactly as litellm would send each request on its own.

A batch line carries the body of one Messages / Chat Completions call, and a provider
answers it exactly as it would answer that call. So the body must be what our
interactive run sends: litellm's own transformation of the request (OpenAI reasoning
models get ``max_completion_tokens``, o-series system turns, Anthropic gets ``system``
blocks, a default ``max_tokens``, ``thinking`` for a reasoning effort, ...).
``litellm.utils.return_raw_request`` builds that body without sending anything.

It costs ~10 ms per call, which adds up over 100,000 requests, while the
transformation depends only on the settings and the message roles. So each distinct
(settings, roles) shape is built once with placeholder contents, and the real contents
are put in place of the placeholders; a shape whose placeholders litellm altered falls
back to one build per request.
"""

from __future__ import annotations

import json
from typing import Any

from prb_tasks.judge.client import import_litellm
from prb_tasks.judge.errors import JudgeConfigError
from prb_tasks.judge.request import ChatRequest


def _slot(i: int) -> str:
    return f"\u0000prb-slot-{i}\u0000"


def _raw_body(model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
    """litellm's request body for one call (nothing is sent)."""
    litellm = import_litellm()
    from litellm.types.utils import CallTypes

    raw = litellm.utils.return_raw_request(CallTypes.completion, {"model": model, "messages": messages, **params})
    body = raw.get("raw_request_body") if isinstance(raw, dict) else None
    if not isinstance(body, dict):
        error = raw.get("error") if isinstance(raw, dict) else None
        raise JudgeConfigError(f"prb-judge: litellm could not build a batch request for {model} ({error}); "
                               "check the model id and generation settings")
    body = dict(body)
    # The OpenAI SDK merges extra_body into the JSON it sends; a batch line must hold the merged body.
    extra = body.pop("extra_body", None)
    if isinstance(extra, dict):
        body.update(extra)
    return body


def _fill(value: Any, contents: dict[str, str], used: list[str]) -> Any:
    if isinstance(value, str):
        if value in contents:
            used.append(value)
            return contents[value]
        return value
    if isinstance(value, list):
        return [_fill(v, contents, used) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, contents, used) for k, v in value.items()}
    return value


class BodyBuilder:
    """Provider request bodies for one judge model.

    Args:
        model: litellm model id (``openai/...`` or ``anthropic/...``).
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self._shapes: dict[tuple[str, tuple[str, ...]], dict[str, Any] | None] = {}

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body litellm would send for ``request``."""
        params = request.params()
        roles = tuple(m["role"] for m in request.messages)
        shape = (json.dumps(params, sort_keys=True), roles)
        if shape not in self._shapes:
            probe = [{"role": role, "content": _slot(i)} for i, role in enumerate(roles)]
            probed = _raw_body(self.model, probe, params)
            # Use the template only if every placeholder survived exactly once.
            used: list[str] = []
            _fill(probed, {_slot(i): "" for i in range(len(roles))}, used)
            ok = sorted(used) == sorted(_slot(i) for i in range(len(roles)))
            self._shapes[shape] = probed if ok else None
        template = self._shapes[shape]
        messages = [{"role": m["role"], "content": m["content"]} for m in request.messages]
        if template is None:
            return _raw_body(self.model, messages, params)
        contents = {_slot(i): m["content"] for i, m in enumerate(messages)}
        return _fill(template, contents, [])

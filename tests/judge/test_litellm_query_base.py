"""Issue 63 item 6: ``api_base`` with a key in its query, through litellm's own code.

The OpenAI client appended ``/chat/completions`` after the query (``/v1?key=K/chat/completions``),
litellm's vLLM path did the same: wrong path, key corrupted. The direct transport was right.
"""

from __future__ import annotations

import asyncio

import pytest

from prb_tasks.judge.client import LiteLLMClient
from prb_tasks.judge.request import ChatRequest
from prb_tasks.testing.fake_server import FakeLLMServer, always


@pytest.mark.parametrize("model", ["openai/fake", "hosted_vllm/fake"])
def test_the_query_stays_a_query_and_the_path_is_right(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    request = ChatRequest(messages=({"role": "user", "content": "Which is better? Answer A or B."},))
    with FakeLLMServer(policy=always("A"), echo_credentials=True) as srv:
        client = LiteLLMClient(model, f"{srv.openai_base}?alt=sse&key=SECRET-Q-1", "sk-test", timeout=30)

        async def twice() -> list[str]:  # two calls on one loop share its client
            return [(await client.call(request)).text for _ in range(2)]

        texts = asyncio.run(twice()) + asyncio.run(twice())  # and a second loop gets its own
        paths = srv.stats()["by_path"]
    assert paths == {"/v1/chat/completions": 4}
    # The whole key reached the server in the query (the header key is hidden as a registered secret).
    assert all(t.endswith("(request credentials: authorization: Bearer ***; query key=SECRET-Q-1)")
               for t in texts), texts

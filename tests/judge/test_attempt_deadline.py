"""Issue 48 item 5: ``timeout=`` bounds a whole attempt on ``transport=litellm``, even while
the server keeps the reply alive by sending a byte at a time (litellm's own timeout bounds
each read only: an attempt ran about 170 s with ``timeout=5``, and an endless trickle hung)."""

from __future__ import annotations

import asyncio

from prb_tasks.judge.client import CallError, LiteLLMClient
from prb_tasks.judge.request import ChatRequest
from prb_tasks.testing.fake_server import FakeLLMServer

REQUEST = ChatRequest(({"role": "user", "content": "A or B?"},), max_tokens=16, temperature=0.0)


def test_an_endless_trickle_ends_the_attempt_at_its_timeout() -> None:
    with FakeLLMServer(fault_script=["trickle", None]) as srv:
        srv.trickle_seconds = 0.1  # far inside litellm's per-read timeout: only a whole-attempt deadline ends it
        # The hang is bounded by progress, not by a clock around the attempt (a 120 s bound was hit
        # at load 10-17, issue 63 item 9): the server ends its trickle after 3,000 bytes, 150 times
        # the 2 s deadline; an attempt still open then reads a reply of white space, not a timeout.
        srv.trickle_limit = 3000
        client = LiteLLMClient("openai/fake", srv.openai_base, "sk-fake-key", timeout=2.0)

        async def attempt() -> CallError | None:
            try:
                await client.call(REQUEST)
            except CallError as exc:
                return exc
            return None

        error = asyncio.run(attempt())
        assert error is not None and error.kind == "timeout" and error.retryable
        assert "no whole reply within 2s" in str(error)
        # The server's next reply is whole and is read (a generous timeout: the deadline bounds a
        # hang here, it is not a speed test).
        client = LiteLLMClient("openai/fake", srv.openai_base, "sk-fake-key", timeout=3600.0)
        assert asyncio.run(attempt()) is None

"""Test doubles for running the judge tasks offline.

See :mod:`prb_tasks.testing.fake_server` for a local HTTP server that speaks
the OpenAI, Anthropic and Ollama chat wire formats.
"""

__all__: list[str] = []

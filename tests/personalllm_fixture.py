"""Small PersonalLLM copies for the tests: the writer lives in :mod:`prb_tasks.testing.personalllm_copy`
(the docs' offline example runs it as a command too)."""

from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm

__all__ = ["fixture_rows", "write_personalllm"]

"""transformers' LOAD REPORT reaches a non-terminal stderr without ANSI codes (issue 49.6)."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from prb_tasks.common.plain_logs import plain_transformers_logs, strip_ansi


def test_load_report_of_a_headless_backbone_has_no_colour_codes(tmp_path) -> None:
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    from prb_tasks.testing.tiny_rm import build_tiny_rm

    build_tiny_rm(tmp_path / "rm", "gpt2")
    hf_logging.get_logger("transformers")  # makes transformers' own stderr handler
    handler = hf_logging._default_handler
    assert handler is not None
    captured = io.StringIO()  # not a terminal, as stderr piped to a file
    previous = handler.setStream(captured)
    try:
        plain_transformers_logs()
        plain_transformers_logs()  # twice: one filter
        AutoModel.from_pretrained(tmp_path / "rm")  # the classifier's head is left out: a LOAD REPORT
    finally:
        handler.setStream(previous)
        handler.filters.clear()
    text = captured.getvalue()
    assert "GPT2Model LOAD REPORT from:" in text
    assert "\x1b[" not in text


def test_strip_ansi() -> None:
    assert strip_ansi("\x1b[1mGPT2Model LOAD REPORT\x1b[0m from: x") == "GPT2Model LOAD REPORT from: x"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_transformers_bars_are_drawn_on_a_terminal_only() -> None:
    """A bar opened under another (the weight loading under prb-method's) moves the cursor up to draw
    itself; into a pipe or log file that left ``\\x1b[A`` codes, so off a terminal it is not drawn."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_tqdm_hook(None)
    try:
        plain_transformers_logs()
        piped, terminal = io.StringIO(), _Terminal()
        for stream in (piped, terminal):
            with hf_logging.tqdm(total=1, desc="outer", file=stream) as outer:
                for _ in hf_logging.tqdm(range(3), desc="Loading weights", file=stream):
                    pass
                outer.update(1)
    finally:
        hf_logging.set_tqdm_hook(None)
    assert piped.getvalue() == ""
    assert "Loading weights" in terminal.getvalue() and "\x1b[A" in terminal.getvalue()

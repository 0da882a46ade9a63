"""Escape codes out of transformers' output when it does not go to a terminal.

transformers' LOAD REPORT (``GPT2Model LOAD REPORT from: ...``, logged when a backbone is
loaded without its head) wraps the model's name in ANSI bold codes whatever its stream is, so a
log file or a captured stderr read ``\\x1b[1mGPT2Model LOAD REPORT\\x1b[0m`` (issue 49, item 6).
Its progress bars (``Loading weights``), opened while one of prb's own is open (prb-method's,
prb-rm's: the model loads on the first request), drew themselves a line below it by moving the
cursor up (``\\x1b[A``) on every update, into a pipe or log file too.
"""

from __future__ import annotations

import logging
import re
from typing import IO, Any, Callable

#: An ANSI escape sequence (colours, bold, cursor moves): ESC [ parameters final-letter.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences.

    Args:
        text: a log message.
    """
    return ANSI.sub("", text)


class _StripAnsi(logging.Filter):
    """Rewrites each record's message without ANSI codes (the record is still emitted)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "\x1b[" in message:
            record.msg, record.args = strip_ansi(message), ()
        return True


def _is_terminal(stream: IO[Any] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


def _bar_off_terminal(factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """transformers' tqdm hook: a bar whose stream is not a terminal is not drawn (tqdm's ``disable=None``)."""
    if not kwargs.get("disable"):
        kwargs = {**kwargs, "disable": None}
    return factory(*args, **kwargs)


def plain_transformers_logs() -> None:
    """Strip ANSI codes from transformers' log records on each of its handlers that does not
    write to a terminal (its default handler writes to stderr), and draw its progress bars only
    on a terminal. Safe to call more than once."""
    from transformers.utils import logging as hf_logging

    set_hook = getattr(hf_logging, "set_tqdm_hook", None)  # transformers 5; 4.x has no weight-loading bar
    if set_hook is not None:
        previous = set_hook(_bar_off_terminal)
        if previous not in (None, _bar_off_terminal):
            set_hook(previous)  # someone else's hook (transformers serve's) stays
    library = logging.getLogger("transformers")
    for handler in library.handlers:
        stream = getattr(handler, "stream", None)
        if not _is_terminal(stream) and not any(isinstance(f, _StripAnsi) for f in handler.filters):
            handler.addFilter(_StripAnsi())

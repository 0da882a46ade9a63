"""Run ``prb eval`` and report when its loader worked, for the suite's phase split.

``python benchmarks/phases.py <prb eval arguments>`` is ``prb eval`` with two clocks
added: one around reading and checking the data (``load_table``) and one around building
each task's documents (``build_docs``, which includes the load; ``load_rows`` in older
checkouts). At exit it prints one
line, ``PHASES {json}``, with epoch times, so the suite can place them between the
process start and the first and last request the fake server saw:

    start-up | load | documents | requests built, judge started | judging | writing

Measurement only: nothing here changes what the run does.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

_clock: dict[str, Any] = {"load": 0.0, "docs": 0.0, "first": None, "last": None, "calls": 0}


def _timed_load(original: Any) -> Any:
    def load_table(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _clock["load"] += time.perf_counter() - started

    return load_table


def _timed_docs(original: Any) -> Any:
    def build_docs(*args: Any, **kwargs: Any) -> Any:
        if _clock["first"] is None:
            _clock["first"] = time.time()
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _clock["docs"] += time.perf_counter() - started
            _clock["last"] = time.time()
            _clock["calls"] += 1

    return build_docs


def main(argv: list[str]) -> int:
    import prb_tasks.documents.personalized_rb as docs
    from prb_tasks.cli import main as prb

    # ``load_rows`` in checkouts older than the columnar reader (for --baseline runs).
    name = "load_table" if hasattr(docs, "load_table") else "load_rows"
    setattr(docs, name, _timed_load(getattr(docs, name)))
    docs.build_docs = _timed_docs(docs.build_docs)
    code = prb(["eval", *argv])
    print("PHASES " + json.dumps({**_clock, "end": time.time()}), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Shared fixtures: copies of the bundled sample in the HF layout, in both formats."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import uuid
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from prb_tasks.common.resources import sample_dir
from prb_tasks.data.personalized_rb.subsets import SUBSETS
from prb_tasks.testing.hub_layout import write_shard
from tests import leftovers

FILE = "test-00000-of-00001"

# Every process the session starts inherits this token (a fresh one per session, nested
# sessions included), so the check below finds its orphans too (tests/leftovers.py). Under
# pytest-xdist each worker imports this file too and so gets a token of its own: a worker
# checks the processes its tests started, and the controller checks only its own (not the
# workers, which it started itself).
_SESSION_PID = os.getpid()
os.environ[leftovers.TOKEN_ENV] = uuid.uuid4().hex

# prb's caches (rankings, selections, judge answers without a cache_dir) go to a folder of
# this session's own, not to the user's cache dir: parallel workers and other runs on the
# machine then never share one, and a run leaves nothing behind. A test that needs an
# empty one still takes the fresh_cache fixture. PRB_CACHE_DIR set by the caller wins.
if not os.environ.get("PRB_CACHE_DIR"):
    _SESSION_CACHE = tempfile.TemporaryDirectory(prefix="prb-test-cache-")
    os.environ["PRB_CACHE_DIR"] = _SESSION_CACHE.name

# Filled on the xdist controller, one entry per worker that finished: its pid and what
# its own check found (the workers' terminal output is not shown, so they send it here).
_WORKERS_DOWN: list[dict] = []


def pytest_testnodedown(node, error) -> None:  # xdist's hook, absent without it
    """On the xdist controller: keep what a finished worker reported."""
    output = getattr(node, "workeroutput", None) or {}
    _WORKERS_DOWN.append({"pid": output.get("prb_pid"), "left": output.get("prb_leftovers", [])})


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test left a process running (a server, a ``prb`` run, a ``sleep``);
    name each one, then kill it so it does not outlive the run. An xdist worker sends its
    list to the controller, which reports every worker's with its own."""
    workers = {w["pid"] for w in _WORKERS_DOWN if w["pid"]}
    left = [str(p) for p in leftovers.wait_then_kill(_SESSION_PID, os.environ.get(leftovers.TOKEN_ENV),
                                                      ignore=workers)]
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller reports it
        workeroutput["prb_pid"] = os.getpid()
        workeroutput["prb_leftovers"] = left
        return
    left += [line for w in _WORKERS_DOWN for line in w["left"]]
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
    lines = [f"prb tests: {len(left)} process(es) left running by the tests (now killed); "
             "end what a test starts (tests/conftest.py, docs/development.md):", *(f"  {p}" for p in left)]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def sample_rows(config: str) -> list[dict]:
    path = sample_dir() / config / f"{FILE}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_layout(root: Path, rows_by_config: dict[str, list[dict]], fmt: str) -> Path:
    """Write rows as ``root/<config>/test-00000-of-00001.<fmt>`` like the HF repo."""
    for config, rows in rows_by_config.items():
        write_shard(root / config, rows, fmt)
    return root


@pytest.fixture(autouse=True)
def _no_handlers_on_closed_streams():
    """Drops logging handlers left writing to a test's captured stderr once it is closed.

    A test that runs lm-eval in-process (``run_eval``) lets lm-eval and datasets attach a
    StreamHandler to the stderr of that moment, capsys's; a later test in the same worker
    that logs then prints logging's "--- Logging error ---" block into its own stderr.
    """
    yield
    for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
        for handler in list(getattr(logger, "handlers", [])):
            if getattr(getattr(handler, "stream", None), "closed", False):
                logger.removeHandler(handler)


@pytest.fixture
def all_sample_rows() -> dict[str, list[dict]]:
    return {s.config: sample_rows(s.config) for s in SUBSETS}


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty prb cache (rankings, selections) on disk and in memory; its folder."""
    from prb_tasks.prompts import rank_cache, selection_cache

    monkeypatch.setenv("PRB_CACHE_DIR", str(tmp_path / "cache"))
    rank_cache._CACHES.clear()
    selection_cache._MEMORY.clear()
    yield tmp_path / "cache"
    rank_cache._CACHES.clear()
    selection_cache._MEMORY.clear()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--heavy", action="store_true",
                     help="also run the tests marked heavy (minutes of CPU training each; off in the default run)")


def _skip_heavy(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Kept out of the default run so the README's test command stays well inside CI's 30 minutes
    # on 2 cores; README "Tests" says how to run them.
    if config.getoption("--heavy"):
        return
    skip = pytest.mark.skip(reason="heavy (minutes of CPU training): run with --heavy")
    for item in items:
        if item.get_closest_marker("heavy") is not None:
            item.add_marker(skip)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the ``slow`` tests first: the workers start on the long ones and
    the short ones fill the gaps at the end, instead of one worker drawing a 60-second test
    when the others are done. Under ``--dist worksteal`` (``.ci/run``) each worker's first
    slice starts with its share of them (``tests/schedule.py``), the ``training`` tests of
    one file kept on one worker (they share one trained plain RM, a module fixture).
    A serial run keeps the files' order.

    The ``training`` tests (each trains small reward models on CPU, 85 s for the file on
    2 idle cores) are ``slow`` too and run by default; ``-m "not training"`` leaves them out.
    The ``heavy`` ones are skipped unless ``--heavy`` is given."""
    _skip_heavy(config, items)
    if not hasattr(config, "workerinput"):
        return

    def is_slow(item: pytest.Item) -> bool:
        return item.get_closest_marker("slow") is not None

    if getattr(config.option, "dist", None) == "worksteal":
        from tests.schedule import worksteal_order

        def unit(item: pytest.Item) -> str:
            return item.nodeid.split("::")[0] if item.get_closest_marker("training") else item.nodeid

        items[:] = worksteal_order(items, int(config.workerinput.get("workercount", 1)), is_slow, unit)
        return
    items.sort(key=lambda item: not is_slow(item))

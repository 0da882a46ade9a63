"""lm-eval's environment report (torch's collect_env, ~3.5 s in a child on 2 busy cores) starts as
the run starts, beside it, instead of after the run's last request (issue 63 item 7)."""

from __future__ import annotations

import sys

import pytest

from prb_tasks.common import lazy_seed


def test_the_child_starts_with_the_run_and_its_text_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # a run that never loaded torch
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))  # the seeding finder goes away with the test
    monkeypatch.setattr(lazy_seed, "_child", None)
    lazy_seed._seed_later(0)
    child = lazy_seed._child
    assert child is not None  # started at seeding time, before any request
    text = lazy_seed._pretty_env_info_in_child()
    assert child.returncode == 0 and lazy_seed._child is None  # that child's answer, collected once
    assert text.startswith("PyTorch version:")


def test_a_run_that_ends_early_leaves_no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lazy_seed, "_child", None)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    lazy_seed._seed_later(0)
    child = lazy_seed._child
    assert child is not None
    lazy_seed._end_child(child)  # what atexit does
    assert child.poll() is not None

"""``python -m prb_tasks.testing.tiny_rm``: the docs' offline step 6 (docs/comparing.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.runner import REPO, run_cli


def test_without_the_rm_extra_it_says_so_in_one_line(tmp_path: Path):
    # torch looks absent, as without the extra.
    code = ("import importlib.util, sys; real = importlib.util.find_spec; "
            "importlib.util.find_spec = lambda n, *a: None if n == 'torch' else real(n, *a); "
            "from prb_tasks.testing.tiny_rm import main; sys.exit(main(sys.argv[1:]))")
    proc = run_cli([str(tmp_path / "rm_1"), "--seed", "1"], cwd=REPO, program=[sys.executable, "-c", code])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()  # before: a ModuleNotFoundError traceback
    assert line.startswith("tiny_rm: needs torch, from the 'rm' extra: pip install ")
    assert not (tmp_path / "rm_1").exists()


def test_it_writes_a_model_prb_rm_can_load(tmp_path: Path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    proc = run_cli([str(tmp_path / "rm_1"), "--seed", "1"], cwd=tmp_path,
                   program=[sys.executable, "-m", "prb_tasks.testing.tiny_rm"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str(tmp_path / "rm_1") and (tmp_path / "rm_1" / "config.json").is_file()

"""``prb validity`` across benchmarks end to end, offline: contestants run a pairwise benchmark and
Best-of-N (PersonalLLM-shaped copy) and RewardBench 2 (a synthetic copy in the hub layout) through
``prb eval --model prb-rm``; a third benchmark comes from a published-scores file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.testing.benchmark_copies import rewardbench2_rows, write_rewardbench2
from prb_tasks.testing.personalllm_copy import fixture_rows, write_personalllm
from tests.runner import run_cli

pytestmark = pytest.mark.slow


def test_three_benchmarks_one_downstream(tmp_path: Path) -> None:
    from prb_tasks.testing.tiny_rm import build_tiny_rm

    pllm = write_personalllm(tmp_path / "pllm", fixture_rows(20, seed=3))
    rb2 = write_rewardbench2(tmp_path / "rb2", rewardbench2_rows(4, 3, seed=5))
    tiny = build_tiny_rm(tmp_path / "rm_1", "gpt2", seed=1)
    other = build_tiny_rm(tmp_path / "rm_2", "gpt2", seed=2)
    meta = json.dumps({"n_users": 4, "items_per_user": 2, "k": 2})
    # One run per contestant for the three tasks (each benchmark's data through its environment variable):
    # each run of prb eval costs seconds of start-up alone.
    data = {"PRB_PERSONALLLM_DIR": str(pllm), "PRB_REWARDBENCH2_DIR": str(rb2)}
    # bm25 needs a user profile, which RewardBench 2 has not: the contestants are RMs that read only the text.
    contestants = {"length": "scorer=length", "rm_1": f"pretrained={tiny}", "rm_2": f"pretrained={other}"}
    for name, args in contestants.items():
        proc = run_cli(["eval", "--model", "prb-rm", "--model_args", args, "--tasks",
                        "personalllm_scalar,personalllm_bon,rewardbench2", "--metadata", meta,
                        "--output_path", str(tmp_path / "runs" / name), "--log_samples"], cwd=tmp_path, env=data)
        assert proc.returncode == 0, proc.stderr[-3000:]
    rb2_scores = {}
    for name in contestants:
        for path in (tmp_path / "runs" / name).rglob("results_*.json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            if "rewardbench2" in data["results"]:
                rb2_scores[name] = data["results"]["rewardbench2"]["score,none"]
    assert set(rb2_scores) == set(contestants)
    published = tmp_path / "published.csv"
    published.write_text("model,rmbench\nlength,55.0\nrm_2,61.5\nrm_1,48.2\n", encoding="utf-8")

    out = tmp_path / "validity"
    proc = run_cli(["validity", str(tmp_path / "runs"), "--compare-with", "rewardbench2", "--scores", str(published),
                    "--out", str(out), "--iters", "300"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout
    print(text)
    assert text.startswith("WARNING: only 3 models")
    assert "every correlation below rests on these 3 models" in text
    report = json.loads((out / "validity_benchmarks.json").read_text(encoding="utf-8"))
    assert [b["name"] for b in report["benchmarks"]] == ["personalllm_scalar", "rewardbench2", "rmbench"]
    by_label = {m["label"]: m for m in report["models"]}
    assert by_label["prb-rm (scorer=length)"]["scores"]["rewardbench2"] == pytest.approx(rb2_scores["length"])
    assert by_label[f"prb-rm (pretrained={other})"]["scores"]["rmbench"] == 61.5
    assert len(report["pairs"]) == 3
    # RewardBench 2 was logged: its intervals also resample its items within each of its 6 subsets (4 rows
    # in each of 5, and 3 Ties prompts, each a ref and a tied row together).
    rb2_bench = next(b for b in report["benchmarks"] if b["name"] == "rewardbench2")
    assert "over its 23 items within each of its 6 subtasks" in rb2_bench["source"]
    assert rb2_bench["measures"]["spearman"]["by_questions"] is not None
    published_bench = next(b for b in report["benchmarks"] if b["name"] == "rmbench")
    assert published_bench["measures"]["spearman"]["by_questions"] is None
    # Three models: no Williams' test (it needs four), and every verdict says so.
    assert all("no Williams' test" in p["verdict"] or "undefined" in p["verdict"] for p in report["pairs"])
    for ext in ("svg", "pdf", "png", "html", "md"):
        assert (out / f"validity_benchmarks.{ext}").is_file(), ext

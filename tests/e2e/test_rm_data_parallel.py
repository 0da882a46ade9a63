"""``prb-rm`` under ``accelerate launch``: two CPU processes, each scoring its share.

lm-eval splits the documents by the model's rank and world size and gathers the
results on rank 0, which alone writes them; the numbers must be those of one process.
"""

from __future__ import annotations

import re
import socket
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.testing.tiny_rm import build_tiny_rm
from tests.runner import read_results, read_samples, run_cli

TASK = "personalized_rb_sample_scalar"
SUBTASKS = [f"{TASK}_{s}" for s in ("art", "lifestyle", "society")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _scores(out: Path) -> dict[tuple[str, int], list[float]]:
    return {(task, s["doc_id"]): [float(r[0][0]) for r in s["resps"]]
            for task in SUBTASKS for s in read_samples(out, task)}


@pytest.mark.slow
def test_two_processes_split_the_documents_and_rank_zero_writes(tmp_path: Path):
    model = build_tiny_rm(tmp_path / "tiny")
    args = ["eval", "--model", "prb-rm", "--model_args", f"pretrained={model},cache=off", "--tasks", TASK,
            "--log_samples"]
    single = run_cli([*args, "--output_path", str(tmp_path / "one")], cwd=tmp_path)
    assert single.returncode == 0, single.stderr[-3000:]

    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
              "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
              "--main_process_port", str(_free_port()), "-m", "prb_tasks"]
    proc = run_cli([*args, "--output_path", str(tmp_path / "two")], cwd=tmp_path, program=launch)
    assert proc.returncode == 0, proc.stderr[-3000:]

    # Each process scored its own half of the 72 responses.
    shares = re.findall(r"prb-rm \(hf, process (\d) of 2\): (\d+) responses", proc.stderr)
    assert sorted(shares) == [("1", "36"), ("2", "36")], proc.stderr[-3000:]
    # Rank 0 alone wrote: one results file, one table, one legend.
    assert len(list((tmp_path / "two").rglob("results_*.json"))) == 1
    assert proc.stdout.count("Metrics:") == 1 and proc.stdout.count("|Groups") <= 1
    # Every document is in the samples, with the scores a single process gives (up to
    # float32 noise: the processes batch other responses together).
    one_scores, two_scores = _scores(tmp_path / "one"), _scores(tmp_path / "two")
    assert one_scores.keys() == two_scores.keys() and len(one_scores) == 36
    for key, scores in one_scores.items():
        assert two_scores[key] == pytest.approx(scores, abs=1e-4), key
    one, two = read_results(tmp_path / "one")["results"], read_results(tmp_path / "two")["results"]
    for task in [TASK, *SUBTASKS]:
        for name in ("acc", "acc_macro", "tie_rate"):
            assert one[task][f"{name},none"] == two[task][f"{name},none"], (task, name)


def test_official_protocol_refuses_to_be_split(tmp_path: Path):
    model = build_tiny_rm(tmp_path / "tiny")
    # What accelerate launch sets in each process; the refusal comes before joining the group.
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", f"pretrained={model},protocol=official",
                    "--tasks", TASK], cwd=tmp_path, env={"WORLD_SIZE": "2", "RANK": "0"})
    assert proc.returncode == 2, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr
    assert last.startswith("prb-rm: protocol=official reproduces the authors' batches of 8 in dataset order")

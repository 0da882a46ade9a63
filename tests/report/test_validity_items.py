"""Intervals over a compared benchmark's items (prb_tasks/report/validity_items.py): each resample's
headline equals the official scoring code run on the resampled items; sample files the module cannot
reproduce are refused with one line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from prb_tasks.report.runs import SkipRun
from prb_tasks.report.validity_items import _ties_leaf, item_draws, read_item_run
from prb_tasks.scoring.rewardbench2 import ties_score
from prb_tasks.scoring.rmbench import style_accuracy
from prb_tasks.stats.clusters import draw_counts

STAMP = "2026-01-01T00-00-00.000000"


def _ties_rows(rng: random.Random, prompts: int) -> list[tuple[str, int, list[float]]]:
    rows = []
    for n in range(prompts):
        if rng.random() < 0.9:
            rows.append((f"ref:{n}", 1, [float(rng.randint(0, 9)) for _ in range(4)]))
        if rng.random() < 0.9:
            correct = rng.choice([1, 2, 3])  # one correct answer: no spread (their NaN case)
            rows.append((f"tied:{n}", correct, [float(rng.randint(0, 9)) for _ in range(correct + 3)]))
    return rows


@pytest.mark.parametrize("seed", range(6))
def test_ties_parts_give_allenais_ties_score(seed: int) -> None:
    rows = _ties_rows(random.Random(seed), 12)
    assert _ties_leaf(rows).score() == pytest.approx(ties_score(rows).score, abs=1e-12)


def test_style_draws_equal_the_authors_matrix_on_the_resampled_prompts(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = [([rng.random() for _ in range(3)], [rng.random() for _ in range(3)]) for _ in range(9)]
    path = _write_run(tmp_path, {"rmbench_chat": [{"doc_id": i, "doc": {}, "score": [c, r]}
                                                  for i, (c, r) in enumerate(rows)]},
                      {"rmbench_chat": style_accuracy(rows).score}, "rmbench_chat")
    run = read_item_run(path, json.loads(path.read_text()), "rmbench_chat", "score")
    draws, items, leaves = item_draws([run], iters=20, seed=11)
    assert (items, leaves) == (9, 1)
    # Units are doc ids sorted as text ("0".."8"), the order draw_counts numbers them in.
    for d, counts in enumerate(next(draw_counts(9, 20, 11))):
        picked = [rows[int(u)] for u, c in zip(sorted(str(i) for i in range(9)), counts) for _ in range(int(c))]
        assert draws[d, 0] == pytest.approx(style_accuracy(picked).score, abs=1e-12)


def test_judge_cells_resample_whole_prompts_of_the_judge_matrix(tmp_path: Path) -> None:
    from prb_tasks.scoring.rmbench_judge import judge_score

    rng = random.Random(5)
    votes = [[(f"p{n}", i, j, rng.choice((-1, 0, 1))) for i in range(3) for j in range(3) for _ in "AB"]
             for n in range(7)]
    samples = [{"doc_id": k, "doc": {"pair_key": None}, "score": list(v)}
               for k, v in enumerate(v for prompt in votes for v in prompt)]
    path = _write_run(tmp_path, {"rmbench_judge_chat": samples},
                      {"rmbench_judge_chat": judge_score([v for p in votes for v in p])}, "rmbench_judge_chat")
    run = read_item_run(path, json.loads(path.read_text()), "rmbench_judge_chat", "score")
    draws, items, leaves = item_draws([run], iters=20, seed=4)
    assert (items, leaves) == (7, 1)
    for d, counts in enumerate(next(draw_counts(7, 20, 4))):
        # A prompt drawn twice counts twice: name its copies apart for the official function.
        picked = [(f"{v[0]}#{k}", *v[1:]) for u, c in zip(sorted(f"p{n}" for n in range(7)), counts)
                  for k in range(int(c)) for v in votes[int(u[1:])]]
        assert draws[d, 0] == pytest.approx(judge_score(picked), abs=1e-12)


def test_a_group_is_the_plain_mean_of_its_subsets(tmp_path: Path) -> None:
    a = [{"doc_id": i, "doc": {}, "score": v} for i, v in enumerate([1.0, 0.0, 0.5])]
    b = [{"doc_id": 0, "doc": {}, "score": 1.0}]
    path = _write_run(tmp_path, {"g_a": a, "g_b": b}, {"g_a": 0.5, "g_b": 1.0, "g": 0.75}, "g",
                      tree={"g": ["g_a", "g_b"]})
    run = read_item_run(path, json.loads(path.read_text()), "g", "score")
    draws, items, leaves = item_draws([run, run], iters=50, seed=1)
    assert (items, leaves) == (4, 2)
    assert np.all(draws[:, 0] == draws[:, 1])  # the same draws for every model
    assert np.all((draws >= 0.5) & (draws <= 1.0))  # g_b is always 1, g_a's mean lies in [0, 1]


def test_a_headline_not_reproduced_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _write_run(tmp_path, {"t": [{"doc_id": 0, "doc": {}, "score": 1.0}]}, {"t": 0.25}, "t")
    with pytest.raises(SkipRun) as caught:
        read_item_run(path, json.loads(path.read_text()), "t", "score")
    assert "\n" not in str(caught.value) and "give score 1, the results file 0.25" in str(caught.value)
    path.with_name(f"samples_t_{STAMP}.jsonl").unlink()
    with pytest.raises(SkipRun, match="no sample logs .re-run it with --log_samples"):
        read_item_run(path, json.loads(path.read_text()), "t", "score")


def _write_run(folder: Path, samples: dict[str, list[dict]], scores: dict[str, float], task: str,
               tree: dict[str, list[str]] | None = None) -> Path:
    """A results file and its samples files in lm-eval's layout (``results_<stamp>.json``)."""
    for name, rows in samples.items():
        (folder / f"samples_{name}_{STAMP}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = folder / f"results_{STAMP}.json"
    path.write_text(json.dumps({"results": {k: {"score,none": v} for k, v in scores.items()},
                                "group_subtasks": tree or {task: []}}))
    return path

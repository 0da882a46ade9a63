"""prb compare folds runs that differ only by prb train's seed folder into one row: the
seed-averaged pair scores with the section's interval, and the spread between the seeds beside it."""

from __future__ import annotations

import statistics

from prb_tasks.report.build import build_report
from prb_tasks.report.seeds import LEGEND
from tests.report_fixture import write_run

TASK = "personalized_rb_scalar_art"
PAIRS = 12


def _right(seed: int):
    # Seed s gets the first 6 + 2 s pairs of each leaf right: accuracies 0.5, 0.667, 0.833.
    return lambda key: int(key.rsplit("/", 1)[-1]) < 6 + 2 * seed


def test_three_seeds_are_one_row_with_their_spread(tmp_path):
    for seed in range(3):
        write_run(tmp_path / f"s{seed}", TASK, "prb-rm", {"pretrained": f"runs/latent/seed-{seed}"}, _right(seed),
                  pairs=PAIRS)
    write_run(tmp_path / "other", TASK, "prb-rm", {"pretrained": "runs/plain"}, lambda key: True, pairs=PAIRS)
    report = build_report([tmp_path])
    labels = [e.label for e in report.entries]
    assert len(labels) == 2, labels
    folded = next(e for e in report.entries if "seed-*" in e.label)
    accs = [6 / 12, 8 / 12, 10 / 12]
    assert folded.label.startswith("prb-rm (pretrained=runs/latent/seed-*) [3 seeds 0,1,2: sd ")
    assert f"sd {100 * statistics.stdev(accs):.1f}, range 50.0-83.3]" in folded.label
    # Each pair's score is the mean over the seeds: the row's accuracy is the seeds' mean.
    assert abs(float(folded.score.mean()) - statistics.fmean(accs)) < 1e-9
    assert sorted(set(folded.score.round(3))) == [0.0, 0.333, 0.667, 1.0]
    assert LEGEND in report.notes and "runs/plain" in " ".join(labels)


def test_one_seed_and_other_labels_are_left_alone(tmp_path):
    write_run(tmp_path / "s0", TASK, "prb-rm", {"pretrained": "runs/latent/seed-0"}, _right(0), pairs=PAIRS)
    write_run(tmp_path / "x", TASK, "prb-rm", {"pretrained": "runs/myseed-1"}, _right(1), pairs=PAIRS)
    report = build_report([tmp_path])
    assert sorted(e.label for e in report.entries) == ["prb-rm (pretrained=runs/latent/seed-0)",
                                                        "prb-rm (pretrained=runs/myseed-1)"]
    assert LEGEND not in report.notes

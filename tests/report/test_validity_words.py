"""``prb validity`` says what its gain is: a Best-of-N pick's over best-of-1, or (runs that
``prb rl`` wrote, task ``personalized_rb_rl``) the RL-trained policy's over the starting one."""

from __future__ import annotations

import pytest

from prb_tasks.report.validity import Estimate, Model, Side, Validity
from prb_tasks.report.validity_output import render_markdown, render_text
from prb_tasks.rl.downstream import TASK as RL_TASK


def _report(downstream: str) -> Validity:
    models = []
    for i, (acc, gain) in enumerate(((0.6, 0.2), (0.7, 0.5), (0.8, 0.4))):
        bench, down = Side("personalized_rb_sample_scalar"), Side(downstream)
        bench.add("art/1", acc)
        down.add("art/1", gain)
        models.append(Model(f"prb-rm (scorer=m{i})", bench, down))
    return Validity(models, "personalized_rb_sample_scalar", downstream, ("3 pairs", "3 questions"), 100,
                    {"spearman": Estimate(0.5, None, None)}, [], [])


@pytest.mark.parametrize("render", [render_text, render_markdown])
def test_rl_runs_describe_the_gain_in_rl_words(render) -> None:
    text = render(_report(RL_TASK))
    assert "gain: gold score of the answer of the policy trained against the RM minus the starting policy's" in \
        " ".join(text.split())
    assert "best-of" not in text.lower()


def test_best_of_n_runs_keep_their_words_and_every_line_fits_a_terminal() -> None:
    text = render_text(_report("personalized_rb_bon"))
    assert "gain: gold score of the best-of-N pick minus best-of-1's" in " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 120

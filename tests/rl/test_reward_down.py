"""A reward model that never answers stops `prb rl` after a run of failed batches (issue 63 item 5:
it trained every step on "reward 0.0 each" and went on), as prb-judge stops on a dead server."""

from __future__ import annotations

import pytest

from prb_tasks.common.errors import PRBError
from prb_tasks.rl.reward import STOP_AFTER_FAILED_BATCHES, RMReward, load_rm


def _batch(reward: RMReward, key: str) -> list[float]:
    return reward(["p"], ["an answer"], rm_prompt=["q"], profile_key=[key])


def test_a_run_of_failed_batches_stops_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # bm25 needs the profile behind profile_key: an unknown key fails every batch, as a dead server does.
    reward = RMReward(load_rm("scorer=bm25"), scale=0.1, on_error=0.0)
    for _ in range(STOP_AFTER_FAILED_BATCHES - 1):
        assert _batch(reward, "no-such-profile") == [0.0]  # one bad batch: the preset's reward, as before
    with pytest.raises(PRBError) as info:
        _batch(reward, "no-such-profile")
    line = str(info.value)
    assert line.startswith(f"prb rl: the reward model failed on {STOP_AFTER_FAILED_BATCHES} batches in a row (last: ")
    assert "check that it is running (--reward-url)" in line and "\n" not in line
    assert capsys.readouterr().err.count("reward 0.0 each") == STOP_AFTER_FAILED_BATCHES - 1


def test_a_good_batch_between_failures_resets_the_count() -> None:
    reward = RMReward(load_rm("scorer=length"), scale=1.0, on_error=0.0)
    reward.failed_in_a_row = STOP_AFTER_FAILED_BATCHES - 1
    assert _batch(reward, "k") == [9.0]  # "an answer": length scorer
    assert reward.failed_in_a_row == 0

"""The dispatch order (issue 24, prompt caching): requests sharing a prefix with an earlier
one are sent once that one has been answered, so a provider's cache can serve them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prb_tasks.judge.dispatch import prefix_group, spaced_order
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.runner import run_cli


def test_followers_go_a_gap_after_their_leader_and_leaders_keep_their_order() -> None:
    groups = [g for pair in range(40) for g in (pair, pair)] + [None, None]  # two orders per pair, adjacent
    order = spaced_order(groups, gap=8)
    assert sorted(order) == list(range(len(groups)))
    position = {index: at for at, index in enumerate(order)}
    leaders = [i for i in range(0, 80, 2)]
    assert [i for i in order if i in set(leaders)] == leaders  # first requests keep lm-eval's order
    for pair in range(40):
        first, second = position[2 * pair], position[2 * pair + 1]
        # Eight dispatches later, or at the end once no other request is left to put between them.
        assert second - first >= 8 or second >= len(order) - 8
    assert position[80] < position[81]  # requests sharing nothing are never held back


def test_no_gap_or_no_groups_keep_the_order() -> None:
    assert spaced_order([1, 1, 2, 2], gap=0) == [0, 1, 2, 3]
    assert spaced_order([None] * 5, gap=3) == [0, 1, 2, 3, 4]
    assert spaced_order([], gap=3) == []


def test_a_users_items_group_by_user_before_pair() -> None:
    assert prefix_group({"user_id": 7, "pair_key": "x/1"}) == ("user", "7")
    assert prefix_group({"pair_key": "art/3"}) == ("pair", "art/3")
    assert prefix_group({"question": "q"}) is None and prefix_group(None) is None


def _cached(tmp_path: Path, after_reply: bool) -> tuple[int, int]:
    """(input, cached input) tokens of a profile run against the fake provider cache."""
    out = tmp_path / f"out-{after_reply}"
    with FakeLLMServer(prompt_cache_min=300, prompt_cache_after_reply=after_reply, latency=0.2,
                       record_requests=False) as server:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                        f"model=openai/fake,api_base={server.openai_base},api_key_env=PRB_TEST_KEY,cache=off,"
                        "num_concurrent=4", "--tasks", "personalized_rb_profile_art",
                        "--metadata", json.dumps({"data_dir": "sample"}), "--output_path", str(out)],
                       cwd=tmp_path, env={"PRB_TEST_KEY": "sk-dispatch-test"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    tokens = json.loads(sorted(out.rglob("usage_*.json"))[-1].read_text())["tokens"]
    return tokens["input"], tokens["cached_input"]


@pytest.mark.slow
def test_both_orders_of_a_pair_are_served_from_the_provider_cache(tmp_path: Path) -> None:
    # 300 words: more than the rules every request shares, less than rules + posts + question.
    total, possible = _cached(tmp_path, after_reply=False)  # every repeated prefix counts
    same_total, served = _cached(tmp_path, after_reply=True)  # only prefixes answered before arrival
    assert total == same_total and 0 < possible < total
    # In lm-eval's order both orders of a pair go out together at concurrency 4 and both
    # miss; spaced, the second arrives after the first was answered.
    assert served >= 0.8 * possible

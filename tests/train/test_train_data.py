"""What ``prb train`` reads, per family, through the family registry (no model is trained)."""

from __future__ import annotations

import pytest

from prb_tasks.data.personalized_rb.sources import SAMPLE
from prb_tasks.train.data import load
from prb_tasks.train.options import TrainError, TrainOptions


def _options(data: str, architecture: str = "plain", **extra) -> TrainOptions:
    return TrainOptions(data=data, architecture=architecture, backbone="b", out="o", **extra)


def test_personalized_rb_sample_is_one_user_per_row():
    data = load(_options(SAMPLE))
    assert data.family == "personalized_rb" and data.few_shot is None
    assert len(data.users) == len(data.examples) > 0
    assert all(e.support == () and e.user.profile for e in data.examples)


@pytest.mark.parametrize("architecture", ["latent", "mixture"])
def test_one_pair_per_user_refuses_the_models_that_learn_from_several(architecture):
    with pytest.raises(TrainError, match=rf"--architecture {architecture} learns from each user's several labelled "
                                         r"pairs, and personalized_rb data has one pair per user; "
                                         r".*PersonalLLM folder"):
        load(_options(SAMPLE, architecture))


def test_personalized_rb_takes_no_metadata():
    with pytest.raises(TrainError, match="--metadata n_users: Personalized RewardBench training takes no --metadata"):
        load(_options(SAMPLE, metadata={"n_users": 3}))


def test_custom_example_trains_on_seen_users_only():
    data = load(_options("example", metadata={"unseen_share": 0.5, "split_seed": 1}))
    assert data.family == "custom" and data.few_shot is not None
    unseen = {u.user_id for u in data.few_shot.split.unseen}
    assert unseen and not unseen & set(data.users)


def test_a_family_without_users_and_a_wrong_metadata_key_are_one_line(tmp_path):
    (tmp_path / "total_dataset.json").write_text("[]")  # an RM-Bench copy, by its layout
    with pytest.raises(TrainError, match=r"holds rmbench data, which has no users; give a Personalized "
                                         r"RewardBench folder .*, a preference file .*, a Community "
                                         r"Alignment folder .*, or a PersonalRewardBench folder"):
        load(_options(str(tmp_path)))
    with pytest.raises(TrainError, match=r"--family: Input should be 'personalized_rb', 'personalllm', 'custom', "
                                         r"'prism', 'community_alignment' or 'personal_reward_bench'"):
        from prb_tasks.train.options import parse

        parse({"data": str(tmp_path), "family": "rmbench", "architecture": "plain", "backbone": "b", "out": "o"}, None)
    with pytest.raises(TrainError, match=r"unknown --metadata key 'unseen_shar' \(did you mean 'unseen_share'\?\)"):
        load(_options("example", metadata={"unseen_shar": 0.5}))


def test_a_bundled_name_with_another_family_is_one_line():
    with pytest.raises(TrainError, match=r"'sample' is the data shipped for family personalized_rb, not custom; "
                                         r"drop --family, or give a preference file"):
        load(_options(SAMPLE, family="custom"))

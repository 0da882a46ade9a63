"""PersonalRewardBench through the registry's few-shot field: prb train's users and the provenance check
that keeps a training user (or another copy) out of the evaluation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prb_tasks.data import families
from prb_tasks.documents.fewshot import FewshotOptions
from prb_tasks.fewshot.method import MethodError
from prb_tasks.testing.personal_reward_bench_copy import write_copy
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import TrainOptions


def _split(copy: Path):
    return families.fewshot_source("personal_reward_bench")(FewshotOptions(data_dir=str(copy)), featured=False)[0]


def _checker(users: list[str], split: dict) -> TrainedMethod:
    method = TrainedMethod.__new__(TrainedMethod)  # the check reads the manifest only; no model is loaded
    method.manifest, method.checkpoint = {"users": users, "split": split}, "ckpt"
    return method


def test_prb_train_reads_the_seen_users_of_both_halves(tmp_path: Path) -> None:
    copy = write_copy(tmp_path / "copy", users=4)
    data = load(TrainOptions(data=str(copy), architecture="plain", backbone="b", out="o"))
    assert data.family == "personal_reward_bench" and data.few_shot is not None
    unseen = {u.user_id for u in data.few_shot.split.unseen}
    assert unseen and not unseen & set(data.users)
    assert {u.split(":")[0] for u in [*data.users, *unseen]} == {"arena", "prism"}


def test_a_checkpoint_refuses_its_training_users_and_another_copy(tmp_path: Path) -> None:
    copy = write_copy(tmp_path / "copy", users=4)
    facts = _split(copy).facts()
    trained = _checker(list(facts.seen), dict(facts.settings))
    trained.check_split(facts)  # the split it was trained for: accepted
    with pytest.raises(MethodError, match=r"trained on 1 of the \d+ users this run scores \(arena:"):
        _checker([*facts.seen, facts.unseen[0]], dict(facts.settings)).check_split(facts)
    other = write_copy(tmp_path / "other", users=4, seed=1)
    other_facts = _split(other).facts()
    assert other_facts.unseen == facts.unseen  # same user ids, same split, other pairs
    with pytest.raises(MethodError, match="evaluate on the data it was trained on"):
        trained.check_split(other_facts)
    # The same bytes elsewhere are the same data.
    shutil.copytree(copy, tmp_path / "moved")
    trained.check_split(_split(tmp_path / "moved").facts())

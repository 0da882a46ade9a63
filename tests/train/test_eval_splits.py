"""The three evaluation splits of the personalization papers (VPL, PAL, LoRe), by the few-shot
``evaluate`` key: unseen users (the protocol), seen users on their held-out latest pairs, and seen
users on pairs learned from (a sanity row); prb train learns what the named split leaves it, and
the provenance check lets a checkpoint score its own seen users only on the split it was trained for."""

from __future__ import annotations

import pytest

from prb_tasks.data import provenance
from prb_tasks.documents.fewshot import FewshotOptions, build_docs, custom_data
from prb_tasks.fewshot.split import make_split
from prb_tasks.testing.taste_groups import write_taste_users
from prb_tasks.train import sources
from prb_tasks.train.options import TrainError
from prb_tasks.train.provenance import Scope, check

QUERIES = 4


def _pairs() -> dict[str, list[str]]:
    return {f"u{i}": [f"u{i}/{n}" for n in range(10)] for i in range(8)}


def test_the_split_evaluates_whom_it_names():
    unseen = make_split(_pairs(), queries=QUERIES)
    held = make_split(_pairs(), queries=QUERIES, evaluate="seen_users_unseen_prompts")
    sanity = make_split(_pairs(), queries=QUERIES, evaluate="seen_users_seen_prompts")
    seen_ids = set(unseen.seen)
    # The same users are seen in all three (one split_seed names one set of seen users).
    assert set(held.seen) == set(sanity.seen) == seen_ids
    assert {u.user_id for u in held.unseen} == {u.user_id for u in sanity.unseen} == seen_ids
    for user in held.unseen:
        assert user.queries == tuple(f"{user.user_id}/{n}" for n in range(6, 10))
        assert not set(user.queries) & set(held.seen[user.user_id])  # never learned from
        assert set(user.pool) <= set(held.seen[user.user_id])  # support: pairs it learned from
    for user in sanity.unseen:
        assert set(user.queries) <= set(sanity.seen[user.user_id])  # the sanity row: learned from
    with pytest.raises(ValueError, match="evaluate: one of"):
        make_split(_pairs(), evaluate="seen")


def test_prb_train_learns_only_what_the_split_leaves(tmp_path):
    path = write_taste_users(tmp_path / "t.jsonl", users=12, pairs=12, queries=QUERIES)
    metadata = {"queries": QUERIES, "evaluate": "seen_users_unseen_prompts"}
    people, data = sources.custom(str(path), metadata)
    trained = {p.key for _, pairs in people for p in pairs}
    queries = {p.key for u in data.split.unseen for p in u.queries}
    assert len(people) == 6 and len(queries) == 6 * QUERIES and not trained & queries
    assert data.settings["evaluate"] == "seen_users_unseen_prompts"
    # The protocol's split records no evaluate key: checkpoints from before it still match.
    assert "evaluate" not in sources.custom(str(path), {"queries": QUERIES})[1].settings
    _, origin, _ = custom_data(FewshotOptions(data_path=str(path), queries=QUERIES))
    assert origin.subset == "preferences"


def test_the_tasks_name_the_split_in_their_data_source(tmp_path, capsys):
    path = write_taste_users(tmp_path / "t.jsonl", users=12, pairs=12, queries=QUERIES)
    docs = build_docs("custom", "method", data_path=str(path), queries=QUERIES, evaluate="seen_users_seen_prompts",
                      config_source="split-test.yaml")
    seen = set(sources.custom(str(path), {"queries": QUERIES})[1].split.seen)
    assert {d["user_id"] for d in docs} == seen
    assert provenance._RECORDED["split-test.yaml"].subset == "preferences; seen users, seen prompts (sanity)"
    err = capsys.readouterr().err
    assert "6 evaluated (seen users, seen prompts (sanity))" in err
    assert "k=16: 6 of 6 evaluated users have too few pairs" in err


def _manifest(settings: dict) -> dict:
    return {"family": "custom", "data": "t.jsonl", "users": ["u1", "u2"], "split": settings}


BASE = {"unseen_share": 0.5, "split_seed": 0, "data_digest": "abc"}
HELD = {**BASE, "evaluate": "seen_users_unseen_prompts"}


def test_a_checkpoint_scores_its_seen_users_only_on_the_split_that_names_them():
    scope = Scope("custom", users=["u1", "u2"], settings=HELD, split=True)
    check(_manifest(HELD), "ck", scope, "prb-method (trained)")  # trained for this split: allowed
    sanity = {**BASE, "evaluate": "seen_users_seen_prompts"}
    check(_manifest(sanity), "ck", Scope("custom", users=["u1"], settings=sanity, split=True), "prb-method (trained)")
    # Trained on the protocol's split (all of each seen user's pairs): its seen users' "held-out"
    # pairs were trained on, so the other split is refused, naming the key.
    with pytest.raises(TrainError, match=r"evaluate without --metadata evaluate \(as it was trained\)"):
        check(_manifest(BASE), "ck", scope, "prb-method (trained)")
    # The protocol's split still refuses a training user.
    with pytest.raises(TrainError, match="was trained on 1 of the 2 users"):
        check(_manifest(BASE), "ck", Scope("custom", users=["u1", "u9"], settings=BASE, split=True), "x")


@pytest.mark.slow
@pytest.mark.training
def test_a_checkpoint_trained_for_the_held_out_split_evaluates_there_and_the_default_one_is_refused(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("accelerate")
    import json

    from prb_tasks.fewshot.evaluate import run
    from prb_tasks.fewshot.registry import MethodError
    from prb_tasks.testing.tiny_rm import build_tiny_base_lm
    from prb_tasks.train.command import train
    from prb_tasks.train.data import load
    from prb_tasks.train.method import TrainedMethod
    from prb_tasks.train.options import parse

    build_tiny_base_lm(tmp_path / "bb", "gpt2")
    path = write_taste_users(tmp_path / "t.jsonl", users=12, pairs=10, queries=QUERIES)
    held = json.dumps({"queries": QUERIES, "evaluate": "seen_users_unseen_prompts"})
    base = {"data": str(path), "architecture": "plain", "backbone": str(tmp_path / "bb"), "max_steps": 2,
            "max_length": 48}
    options = parse({**base, "out": str(tmp_path / "held")}, held)
    train(options, progress=False)
    manifest = json.loads((tmp_path / "held" / "manifest.json").read_text())
    assert manifest["split"]["evaluate"] == "seen_users_unseen_prompts"
    outcomes = run(TrainedMethod(options.out), load(options).few_shot, ks=[0])
    assert {o.user_id for o in outcomes} == set(manifest["users"])  # its own seen users, on held-out pairs
    default = parse({**base, "out": str(tmp_path / "default")}, json.dumps({"queries": QUERIES}))
    train(default, progress=False)
    with pytest.raises(MethodError, match="evaluate without --metadata evaluate"):
        run(TrainedMethod(default.out), load(options).few_shot, ks=[0])

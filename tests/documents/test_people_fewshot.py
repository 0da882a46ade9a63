"""The few-shot protocol and ``prb train``'s users on the families of real people."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.data import families
from prb_tasks.data.errors import DataError
from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.documents import fewshot
from tests.community_alignment_fixture import ca_rows, write_ca, write_ca_latest
from tests.prism_fixture import many_rows, write_prism


def test_prism_fewshot_keeps_one_pair_per_turn_and_splits_people(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_prism(tmp_path / "prism", *many_rows())
    docs = fewshot.build_docs("prism", "method", data_dir=str(folder), queries=2, unseen_share=0.5)
    # Three rated responses per turn give two pairs; the few-shot users keep one (the clearest).
    keys = {d["query_key"] for d in docs}
    assert all(key.endswith("/0/1") or key.endswith("/0/0") for key in keys)
    assert {d["k"] for d in docs} == {0, 1, 2, 4}  # six turns each: 2 queries + up to 4 support
    options = fewshot.FewshotOptions(data_dir=str(folder), queries=2, unseen_share=0.5)
    data = families.fewshot_source("prism")(options, featured=False)[0]
    assert len(data.split.seen) + len(data.split.unseen) == 6 and data.source == "prism"
    seen_user = data.users[next(iter(data.split.seen))]
    assert seen_user.family == "prism"
    for pairs in data.split.seen.values():
        assert len({p.key.rsplit("/", 1)[0] for p in pairs}) == len(pairs) == 6  # one per turn
    err = capsys.readouterr().err
    assert "few-shot split (prism): 3 seen users, 3 unseen" in err


def test_prb_train_reads_the_seen_people_with_their_profile(tmp_path: Path) -> None:
    folder = write_prism(tmp_path / "prism", *many_rows())
    people, split = families.train_source(families.get("prism"))(str(folder), {"queries": 2})
    assert split is not None and len(people) == len(split.split.seen) == 3
    user, pairs = next((u, p) for u, p in people if u.demographics)
    assert user.demographics["country of residence"] == "Spain" and user.profile[0].category == "Self-description"
    assert len(pairs) == 6 and all(p.reason for p in pairs)
    ca_people, _ = families.train_source(families.get("community_alignment"))(str(write_ca(tmp_path / "ca")), {})
    assert {u.family for u, _ in ca_people} == {"community_alignment"}


def test_the_registry_refuses_train_from_fewshot_without_a_source() -> None:
    with pytest.raises(ValueError, match="needs a few-shot source"):
        BenchmarkFamily(name="x", order=1, validate=lambda p, b: 0, documents=("m",), options="m:O",
                        task_folders=(), commands=frozenset({"train"}), train="fewshot")
    with pytest.raises(Exception, match="family rmbench has no few-shot tasks; these have: personalllm, custom, "
                                        "prism, community_alignment or personal_reward_bench"):
        families.fewshot_source("rmbench")


def test_the_split_option_picks_community_alignments_file_for_fewshot_and_train(tmp_path: Path) -> None:
    # The full file holds two annotators, the filtered one five; a latest file beside them is auto's.
    folder = write_ca(tmp_path / "ca", full=ca_rows()[:2])
    source = families.fewshot_source("community_alignment")

    def annotators(**options: str) -> set[str]:
        data = source(fewshot.FewshotOptions(data_dir=str(folder), queries=1, **options), featured=False)[0]
        return set(data.users)

    assert annotators() == annotators(split="filtered") == {"101", "102", "103", "104", "105"}
    assert annotators(split="full") == {"101", "102"}
    write_ca_latest(folder, ca_rows()[4:])
    assert annotators() == annotators(split="latest") == {"104", "105"}
    train = families.train_source(families.get("community_alignment"))
    _, full = train(str(folder), {"split": "full", "queries": 1})
    assert set(full.users) == {"101", "102"}
    with pytest.raises(DataError, match="unknown Community Alignment split 'train'; expected one of auto, latest"):
        train(str(folder), {"split": "train", "queries": 1})


def test_a_split_is_refused_in_one_line_where_the_data_is_one_file_set(tmp_path: Path) -> None:
    folder = write_prism(tmp_path / "prism", *many_rows())
    expected = ("few-shot (prism): --metadata split 'full' picks a file of a copy published as several "
                "(community_alignment); prism has one: leave split out")
    for attempt in (lambda: fewshot.build_docs("prism", "method", data_dir=str(folder), split="full"),
                    lambda: families.train_source(families.get("prism"))(str(folder), {"split": "full"})):
        with pytest.raises(DataError) as caught:
            attempt()
        assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_feature_method_on_prism_says_how_to_go_on(tmp_path: Path) -> None:
    # PRISM has no reward-model scores: the feature-based methods stop, and the line says what to give.
    from prb_tasks.fewshot import registry
    from prb_tasks.fewshot.evaluate import run
    from prb_tasks.fewshot.linear import MissingFeatures
    from prb_tasks.fewshot.sources import lookup

    folder = write_prism(tmp_path / "prism", *many_rows())
    docs = fewshot.build_docs("prism", "method", data_dir=str(folder), queries=2, unseen_share=0.5)
    with pytest.raises(MissingFeatures) as caught:
        run(registry.build("lowrank", {}), lookup(docs[0]["split_key"]))
    message = str(caught.value)
    assert """give --metadata '{"features": "embedding"}'""" in message and "\n" not in message

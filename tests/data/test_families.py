"""The family registry: one declaration per family reaches every command that lists families."""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from prb_tasks.cli import main
from prb_tasks.common.resources import tasks_dir
from prb_tasks.data import families
from prb_tasks.data.families import BenchmarkFamily
from prb_tasks.documents.metadata import MetadataSpec, all_specs

FAKE_DOCS = "tests_fake_family_documents"


class FakeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n_pairs: int = Field(3, description="how many pairs the fake data has")


def _fake_people(location: str, metadata: dict):
    """Two users of two pairs each; ``--metadata`` is passed through untouched."""
    from prb_tasks.fewshot.method import Pair, Response, User

    assert metadata == {"n_pairs": 2}
    users = [User(f"u{n}", family="fakebench") for n in range(2)]
    return [(u, [Pair(f"{u.user_id}/{i}", f"q{i}?", Response("yes"), Response("no")) for i in range(2)])
            for u in users], None


def _fake_docs(location: str, options: dict) -> list[dict]:
    return [{"pair_key": f"p{i}", "subset": "fake", "user_id": None, "question": "q?",
             "choices": ["a much longer answer", "short"], "chosen_first": True, "profile_key": None}
            for i in range(int(options.get("n_pairs", 3)))]


@pytest.fixture
def fake_family(monkeypatch):
    """A family registered by the test alone: its validator, layout test, builder and audit source."""
    module = types.ModuleType(FAKE_DOCS)
    module.METADATA = MetadataSpec.from_options("fakebench_tasks", FakeOptions)
    module.FakeOptions = FakeOptions
    module.audit_docs = _fake_docs
    module.people = _fake_people
    monkeypatch.setitem(sys.modules, FAKE_DOCS, module)
    seen: list[tuple[Path, bool]] = []

    def validate(path: Path, bundled: bool = False) -> int:
        seen.append((path, bundled))
        print(f"fakebench copy at {path.name}: ok")
        return 0

    family = families.register(BenchmarkFamily(
        name="fakebench", order=99, validate=validate, documents=(FAKE_DOCS,),
        options=f"{FAKE_DOCS}:FakeOptions", task_folders=("fakebench_tasks",),
        commands=frozenset({"validate", "audit", "train"}),
        detect=lambda path: (path / "FAKEBENCH").is_file(), detect_order=5,
        audit=f"{FAKE_DOCS}:audit_docs", describe="a fakebench folder",
        train=f"{FAKE_DOCS}:people", users_have="fakebench users are numbers: no demographics, no profile",
    ))
    yield family, seen
    families.unregister("fakebench")


def _choices(argv: list[str], capsys) -> str:
    """The error argparse prints for an unknown --family (it lists the choices)."""
    with pytest.raises(SystemExit):
        main(argv)
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_builtin_families_and_their_commands():
    # The order every list of families has had since before the registry.
    assert families.names("validate") == ("personalized_rb", "personalllm", "custom", "rewardbench2", "rmbench",
                                          "prism", "community_alignment", "personal_reward_bench")
    assert families.names("download") == ("personalized_rb", "personalllm", "rewardbench2", "rmbench", "prism",
                                          "community_alignment", "personal_reward_bench")
    assert families.names("audit") == ("personalized_rb", "personalllm", "custom", "prism", "community_alignment")
    assert families.names("train") == ("personalized_rb", "personalllm", "custom", "prism", "community_alignment",
                                       "personal_reward_bench")


def test_builtin_declarations_agree_with_their_code():
    from prb_tasks.data.personalized_rb.sources import SAMPLE

    assert families.bundled(SAMPLE).name == "personalized_rb"
    for family in families.families():
        options = families.load(family.options)
        builder = importlib.import_module(family.documents[0])
        assert set(options.model_fields) == set(builder.METADATA.keys), family.name
        folders = {importlib.import_module(m).METADATA.family for m in family.documents}
        assert folders == set(family.task_folders), family.name
        assert all((tasks_dir() / folder).is_dir() for folder in family.task_folders), family.name
        if family.audit:
            assert callable(families.load(family.audit))


def test_unknown_family_is_one_line():
    with pytest.raises(Exception, match=r"unknown benchmark family 'personalm' \(did you mean 'personalllm'\?\)"):
        families.get("personalm")


def test_a_registered_family_reaches_every_command(fake_family, tmp_path, capsys):
    family, seen = fake_family
    assert "'fakebench'" in _choices(["data", "validate", "x", "--family", "typo"], capsys)
    assert "'fakebench'" in _choices(["audit", "x", "--family", "typo"], capsys)
    assert "'fakebench'" not in _choices(["data", "download", "x", "--family", "typo"], capsys)  # no hub copy

    # prb data validate: named, and guessed from the family's own layout test.
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "FAKEBENCH").write_text("")
    assert main(["data", "validate", str(copy)]) == 0
    assert capsys.readouterr().out == "fakebench copy at copy: ok\n"
    assert seen == [(copy, False)]

    # prb audit reads its audit source, with its --metadata keys checked against its builder.
    assert main(["audit", str(copy), "--format", "json", "--metadata", '{"n_pairs": 4}']) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pairs"] == 4
    assert main(["audit", str(copy), "--metadata", '{"n_pair": 4}']) == 2
    assert "unknown --metadata key 'n_pair' for fakebench_tasks data (did you mean 'n_pairs'?)" \
        in capsys.readouterr().err
    assert families.what_to_give("audit").endswith(", or a fakebench folder")
    assert families.what_to_give("train").endswith(", or a fakebench folder")

    # prb eval's --metadata check knows its keys.
    assert any(spec.family == "fakebench_tasks" for spec in all_specs())

    # prb train reads the family's training source (its layout guessed), with --metadata as given.
    from prb_tasks.train.data import load
    from prb_tasks.train.options import TrainOptions

    data = load(TrainOptions(data=str(copy), architecture="latent", backbone="b", out="o",
                             metadata={"n_pairs": 2}, support_max=1))
    # Without a split (few_shot None) prb train holds rows out by question, at least one per group (here a user).
    assert (data.family, data.few_shot) == ("fakebench", None)
    trained = [e.pair.key for e in data.examples]
    assert len(data.heldout) == 2 and sorted(trained + list(data.heldout)) == ["u0/0", "u0/1", "u1/0", "u1/1"]
    assert data.users == sorted({k.split("/")[0] for k in trained})
    for e in data.examples:  # support: at most one other pair of the same user
        assert len(e.support) <= 1
        assert all(p.key != e.pair.key and p.key.split("/")[0] == e.user.user_id for p in e.support)

    # What its users lack is said in the family's words.
    from prb_tasks.fewshot.method import MissingUserInfo

    with pytest.raises(MissingUserInfo, match=r"user 'u0' has no profile \(fakebench users are numbers: "):
        data.examples[0].user.require("profile")


def test_an_unregistered_family_is_gone(fake_family, capsys):
    families.unregister("fakebench")
    assert "'fakebench'" not in _choices(["data", "validate", "x", "--family", "typo"], capsys)
    assert all(spec.family != "fakebench_tasks" for spec in all_specs())


def test_a_family_needs_consistent_commands():
    with pytest.raises(ValueError, match="'download' needs hub_repo"):
        BenchmarkFamily(name="x", order=1, validate=lambda p, b: 0, documents=("m",), options="m:O",
                        task_folders=("x",), commands=frozenset({"validate", "download"}))
    with pytest.raises(ValueError, match="already registered"):
        families.register(BenchmarkFamily(name="custom", order=1, validate=lambda p, b: 0, documents=("m",),
                                          options="m:O", task_folders=("x",)))


def test_a_preference_file_that_does_not_exist_yet_gets_the_preference_file_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert families.detect(Path("my_prefs.jsonl")) == "custom"  # before: personalized_rb, the first family
    assert main(["data", "validate", "my_prefs.jsonl"]) == 2  # the README's own file name
    err = capsys.readouterr().err.strip()
    assert err == ("prb: 'my_prefs.jsonl' does not exist; pass your preference file (.jsonl or .json, see "
                   "docs/your-data.md), or 'example' for the bundled one")
    assert families.detect(Path("nothere")) == "personalized_rb"  # a folder name keeps the benchmark's hint

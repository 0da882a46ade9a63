"""No path scores a ``prb train`` checkpoint on what it trained on (issue 62): prb-method, prb-rm
(scalar and Best-of-N tasks), prb rl share one check (:mod:`prb_tasks.train.provenance`), and the
hint prb train prints scores only data the model never saw."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.registry import MethodError
from prb_tasks.rm.errors import RMError
from prb_tasks.rm.inputs import RMInput, from_request
from prb_tasks.testing.personal_pairs import write_users
from prb_tasks.testing.tiny_rm import build_tiny_base_lm
from prb_tasks.train import checkpoint
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.hint import evaluation_command
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import TrainError, parse
from prb_tasks.train.provenance import HELDOUT_ROWS, Scope, check, row_digest
from tests.prism_fixture import many_rows, write_prism


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("provenance")
    build_tiny_base_lm(folder / "bb", "gpt2")
    write_users(folder / "users.jsonl", users=12, pairs=10)
    return folder


def _train(root: Path, name: str, data: str, architecture: str = "plain", metadata: dict | None = None,
           **more) -> dict:
    values = {"data": data, "architecture": architecture, "backbone": str(root / "bb"), "out": str(root / name),
              "max_steps": 1, "max_length": 64, "batch_size": 4, **more}
    if not (root / name / "manifest.json").is_file():
        train(parse(values, json.dumps(metadata) if metadata else None), progress=False)
    return values


def _rm(folder: Path):
    from prb_tasks.rm.model import RewardModelLM

    return RewardModelLM.create_from_arg_string(f"pretrained={folder},device=cpu")


def _items(docs: list[dict], task: str) -> list[RMInput]:
    return [from_request(doc, "", "", i, task) for doc in docs for i in (0, 1)]


def _custom_docs(path: Path, variant: str) -> list[dict]:
    from prb_tasks.documents.custom import build_docs

    return build_docs(variant, data_path=str(path))


def _prb_docs(**metadata) -> list[dict]:
    from prb_tasks.data.personalized_rb.subsets import SUBSETS
    from prb_tasks.documents.personalized_rb import build_docs

    return [d for s in SUBSETS for d in build_docs(s.config, "scalar", source="sample", **metadata)]


# --- 62.1: the hint scores only rows the model never saw -------------------------------------------------


@pytest.mark.slow
@pytest.mark.training
def test_personalized_rb_training_holds_rows_out_and_the_hint_scores_only_them(root):
    values = _train(root, "prb-plain", "sample")
    folder = root / "prb-plain"
    manifest = json.loads((folder / "manifest.json").read_text())
    held = (folder / HELDOUT_ROWS).read_text().split()
    everything = _prb_docs()
    assert held and len(held) < len(everything) and manifest["heldout_rows"] == len(held)
    # Every subset keeps at least one row out, and none of them was trained on.
    assert {key.split("/")[0] for key in held} == {d["pair_key"].split("/")[0] for d in everything}
    trained = {e.pair.key for e in load(parse(values, None)).examples}
    assert trained.isdisjoint(held) and len(trained) + len(held) == len(everything)
    assert set(manifest["rows"]) == {row_digest(d["question"]) for d in everything if d["pair_key"] not in held}

    hint = evaluation_command(str(folder), "personalized_rb", "sample", False, {}, None)
    argv = shlex.split(hint.replace("\\\n", " "))
    assert argv[argv.index("--tasks") + 1] == "personalized_rb_sample_scalar"
    meta = json.loads(argv[argv.index("--metadata") + 1])
    assert meta == {"rows": f"{folder}/{HELDOUT_ROWS}"}
    docs = _prb_docs(**meta)
    assert sorted(d["pair_key"] for d in docs) == sorted(held)
    rm = _rm(folder)
    assert len(rm.rewards(_items(docs, "personalized_rb_sample_scalar"), disable_tqdm=True)) == 2 * len(held)
    # Without the rows: the rows it trained on are refused, in one line naming how many and what to add.
    with pytest.raises(RMError) as caught:
        rm.rewards(_items(everything, "personalized_rb_sample_scalar"), disable_tqdm=True)
    line = str(caught.value)
    assert "\n" not in line
    assert (f"prb-rm: checkpoint '{folder}' was trained on {len(trained)} of the {len(everything)} rows this run "
            f"scores (by their questions); score the rows it held out: add \"rows\": "
            f"\"{folder}/{HELDOUT_ROWS}\" to --metadata") in line


def test_a_rows_file_naming_no_row_of_a_subset_is_one_line(tmp_path):
    from prb_tasks.data.errors import DataError

    rows = tmp_path / "rows.txt"
    rows.write_text("art/0\n", encoding="utf-8")
    from prb_tasks.documents.personalized_rb import build_docs

    assert [d["pair_key"] for d in build_docs("art", "scalar", source="sample", rows=str(rows))] == ["art/0"]
    with pytest.raises(DataError, match=r"names no row of subset Lifestyle_and_Personal_Development"):
        build_docs("lifestyle", "scalar", source="sample", rows=str(rows))
    with pytest.raises(DataError, match=r"rows '.*missing.txt' cannot be read"):
        build_docs("art", "scalar", source="sample", rows=str(tmp_path / "missing.txt"))


# --- 62.2: prb-rm refuses the users it trained on ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.training
def test_prb_rm_refuses_the_training_users_of_a_custom_checkpoint(root):
    values = _train(root, "custom-plain", str(root / "users.jsonl"))
    folder = root / "custom-plain"
    trained = json.loads((folder / "manifest.json").read_text())["users"]
    docs = _custom_docs(root / "users.jsonl", "scalar")
    rm = _rm(folder)
    with pytest.raises(RMError) as caught:
        rm.rewards(_items(docs, "personalized_custom_scalar"), disable_tqdm=True)
    line = str(caught.value)
    assert "\n" not in line
    assert (f"prb-rm: checkpoint '{folder}' was trained on {len(trained)} of the 12 users this run scores "
            f"({', '.join(sorted(trained)[:3])}, ...); score the users it never saw: --model prb-method "
            f"--model_args method=trained,checkpoint={folder} --tasks personalized_custom_fewshot") in line
    # The users it never saw are scored.
    unseen = [d for d in docs if d["user_id"] not in trained]
    assert unseen and len(rm.rewards(_items(unseen, "personalized_custom_scalar"), disable_tqdm=True)) == \
        2 * len(unseen)
    assert load(parse(values, None)).users == trained


# --- 62.3: a context checkpoint under prb-rm gets the parts it was trained with, or one line -----------------


@pytest.mark.slow
@pytest.mark.training
def test_prb_rm_refuses_a_context_checkpoint_on_rows_without_its_parts(root):
    _train(root, "custom-context", str(root / "users.jsonl"), "context", context_parts="demographics,history",
           support_max=2)
    folder = root / "custom-context"
    docs = _custom_docs(root / "users.jsonl", "scalar_history")
    unseen = [d for d in docs if d["user_id"] not in json.loads((folder / "manifest.json").read_text())["users"]]
    with pytest.raises(RMError) as caught:
        _rm(folder).rewards(_items(unseen, "personalized_custom_scalar_history"), disable_tqdm=True)
    assert str(caught.value) == (
        f"prb-rm: checkpoint '{folder}' reads demographics, history (as it was trained); "
        "personalized_custom_scalar_history gives prb-rm none of them (demographics, history missing); evaluate "
        "it with prb-method on its family's few-shot task (the hint prb train printed), or train one with "
        "--context-parts profile for this task")


@pytest.mark.slow
@pytest.mark.training
def test_a_profile_context_checkpoint_scores_held_out_personalized_rb_rows(root):
    _train(root, "prb-context", "sample", "context", context_parts="profile", budget=32)
    folder = root / "prb-context"
    docs = _prb_docs(rows=str(folder / HELDOUT_ROWS))
    scores = _rm(folder).rewards(_items(docs, "personalized_rb_sample_scalar"), disable_tqdm=True)
    assert len(scores) == 2 * len(docs)


# --- 62.4: PRISM and Community Alignment checkpoints are tied to their data ---------------------------------


def _flip_last_choices(conversations: list[dict]) -> list[dict]:
    """Every person's last conversation with the choice moved to another response."""
    last = {}
    for n, conv in enumerate(conversations):
        last[conv["user_id"]] = n
    out = json.loads(json.dumps(conversations))
    for n in last.values():
        models = [t for t in out[n]["conversation_history"] if t["role"] == "model"]
        chosen = next(i for i, t in enumerate(models) if t["if_chosen"])
        other = (chosen + 1) % len(models)
        models[chosen]["if_chosen"], models[other]["if_chosen"] = False, True
        models[chosen]["score"], models[other]["score"] = models[other]["score"], models[chosen]["score"]
    return out


@pytest.mark.slow
@pytest.mark.training
def test_a_prism_checkpoint_refuses_an_edited_copy_of_its_data(root):
    survey, conversations = many_rows(8, 8)
    copy = write_prism(root / "prism", survey, conversations)
    values = _train(root, "prism-plain", str(copy), metadata={"queries": 2}, family="prism")
    folder = root / "prism-plain"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert len(manifest["split"]["data_digest"]) == 16
    edited = write_prism(root / "prism-edited", survey, _flip_last_choices(conversations))
    data = load(parse({**values, "data": str(edited)}, '{"queries": 2}')).few_shot
    assert data is not None and data.settings["data_digest"] != manifest["split"]["data_digest"]
    with pytest.raises(MethodError, match=rf"checkpoint '{folder}' was trained on another split; evaluate on the "
                                          r"data it was trained on \(.*prism; this data differs\)"):
        run(TrainedMethod(str(folder)), data)
    # The copy it was trained on is accepted.
    assert run(TrainedMethod(str(folder)), load(parse(values, '{"queries": 2}')).few_shot)

    # 62.6: a checkpoint of another family is named as such, not as a split's keys.
    custom = load(parse({**values, "data": str(root / "users.jsonl"), "family": None}, None)).few_shot
    with pytest.raises(MethodError) as caught:
        run(TrainedMethod(str(folder)), custom)
    assert str(caught.value).startswith(f"prb-method (trained): checkpoint '{folder}' was trained on another "
                                        "family's data (prism; this run: custom); evaluate it on prism data")


def test_community_alignment_pairs_carry_a_digest_that_an_edit_changes(tmp_path):
    from prb_tasks.documents.fewshot import people_digest
    from prb_tasks.fewshot.method import Pair, Response, User

    users = {"a": User("a", demographics={"country": "IT"})}
    pairs = {"a": [Pair("a/1", "Ciao?", Response("Ciao!"), Response("Salve."))]}
    flipped = {"a": [Pair("a/1", "Ciao?", Response("Salve."), Response("Ciao!"))]}
    assert people_digest(pairs, users) != people_digest(flipped, users)
    assert people_digest(pairs, users) != people_digest(pairs, {"a": User("a", demographics={"country": "FR"})})
    assert people_digest(pairs, users) == people_digest(pairs, dict(users))


def test_another_family_is_named_before_the_split_keys():
    manifest = {"family": "personalllm", "data": "pll/", "users": ["user_1"],
                "split": {"n_users": 100, "alpha": 0.5, "data_digest": "ab", "split_seed": 0, "unseen_share": 0.5}}
    with pytest.raises(TrainError) as caught:
        check(manifest, "ck", Scope("custom", users=("u1",), settings={"data_digest": "cd", "split_seed": 0,
                                                                       "unseen_share": 0.5}, split=True), "prb-method")
    assert str(caught.value) == ("prb-method: checkpoint 'ck' was trained on another family's data (personalllm; "
                                 "this run: custom); evaluate it on personalllm data (the DATA it was trained on: "
                                 "pll/), or train a model on this data with prb train")


# --- 62.6: a manifest too deep to parse is one line ----------------------------------------------------------


def test_a_100000_deep_manifest_is_one_line(tmp_path):
    (tmp_path / "manifest.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(TrainError) as caught:
        checkpoint.read_manifest(tmp_path, "prb-rm")
    assert str(caught.value) == (f"prb-rm: {tmp_path / 'manifest.json'} nests too deeply to be a prb-train/1 "
                                 "manifest; train the model again")
    assert not checkpoint.is_checkpoint(tmp_path)


# --- prb rl: the RL prompts are never the rows the reward model trained on -----------------------------------


@pytest.mark.slow
@pytest.mark.training
def test_prb_rl_refuses_a_reward_model_trained_on_its_prompts(root):
    from prb_tasks.common.errors import PRBError
    from prb_tasks.rl.prompts import build_prompts
    from prb_tasks.rl.reward import check_prompts

    _train(root, "prb-plain", "sample")
    folder = root / "prb-plain"
    prompts = build_prompts(1, "prb", "sample", None, {"max_post_chars": 200})
    held = set((folder / HELDOUT_ROWS).read_text().split())
    with pytest.raises(PRBError) as caught:
        check_prompts(f"pretrained={folder}", prompts)
    assert str(caught.value).startswith(f"prb rl: --rm pretrained={folder}: checkpoint '{folder}' was trained on "
                                        f"{len(prompts) - len(held)} of the {len(prompts)} rows this run scores")
    assert "--lamp-qa DIR" in str(caught.value)
    check_prompts(f"pretrained={folder}", [p for p in prompts if p.pair_key in held])
    check_prompts("scorer=length", prompts)  # not a checkpoint: nothing to check

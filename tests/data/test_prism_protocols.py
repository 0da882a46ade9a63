"""PRISM's pairs as the people who publish on it build them, each preset checked against a transcription of
the anchor's own code run on the same rows: the authors' battles (HannahKirk/prism-alignment,
``src/data_analysis/ranking.py``, ``extract_battles``) and LoRe's split (facebookresearch/LoRe,
``PRISM/prepare.py``). The transcriptions below restate the scripts' steps on the rows as parsed JSON."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.data.prism.protocol import PRESETS, PrismProtocol, protocol_of
from prb_tasks.data.prism.reader import TIED, UNLABELLED, read_prism
from tests.prism_fixture import survey_row, write_prism

MODELS = ("gpt-4", "claude-2", "llama-2-70b", "mistral-7b", "command", "palm-2")
TYPES = ("unguided", "values guided", "controversy guided")


def _rows(seed: int = 7, people: int = 14) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A PRISM-shaped copy with what the protocols tell apart: 2 to 9 conversations a person, one to three
    turns, four distinct models rating 1-100 in the opening turn and two after, equal scores, one
    conversation with no unchosen answer, one person who completed none, conversation types, balanced flags."""
    rng = random.Random(seed)
    survey = [survey_row(f"user{i:04d}", num_completed_conversations=0 if i == people - 1 else 5)
              for i in range(people)]
    conversations: list[dict[str, Any]] = []
    for i in range(people - 1):
        for c in range(rng.randint(2, 9)):
            history: list[dict[str, Any]] = []
            for t in range(rng.randint(1, 3)):
                history.append({"turn": t, "role": "user", "content": f"message {i}-{c}-{t}"})
                models = rng.sample(MODELS, 4 if t == 0 else 2)
                scores = [rng.choice([10, 30, 50, 52, 55, 70, 88, 90, 90]) for _ in models]
                if i == 2 and c == 0:
                    models, scores = models[:1], scores[:1]  # a turn without an unchosen answer
                top = max(scores)
                chosen = rng.choice([j for j, s in enumerate(scores) if s == top])  # ties broken at random
                for j, (model, score) in enumerate(zip(models, scores)):
                    history.append({"turn": t, "role": "model", "content": f"answer {i}-{c}-{t} by {model}",
                                    "model_provider": "x", "model_name": model, "score": score,
                                    "if_chosen": j == chosen, "within_turn_id": j})
                if i == 2 and c == 0:
                    break
            conversations.append({
                "conversation_id": f"c{i:02d}{c:02d}", "user_id": f"user{i:04d}",
                "conversation_type": TYPES[(i + c) % 3], "conversation_turns": 1 + max(e["turn"] for e in history),
                "conversation_history": history, "open_feedback": f"feedback {i}-{c}",
                "choice_attributes": {"values": 50}, "included_in_balanced_subset": (i + c) % 4 != 0,
            })
    return survey, conversations


def authors_battles(conversations: list[dict[str, Any]], tie_thresh: int = 5) -> list[dict[str, Any]]:
    """``extract_battles`` on the openers: per opening turn, each model's score, every pair of models."""
    battles = []
    for conv in conversations:
        store: dict[str, Any] = {}
        for entry in conv["conversation_history"]:
            if entry["turn"] == 0 and entry["role"] == "model":
                store[entry["model_name"]] = (entry["score"], entry["content"])
        for (model_a, (score_a, text_a)), (model_b, (score_b, text_b)) in itertools.combinations(store.items(), 2):
            if abs(score_a - score_b) <= tie_thresh:
                winner = "tie"
            elif score_a > score_b:
                winner = "model_a"
            else:
                winner = "model_b"
            battles.append({"user_id": conv["user_id"], "text_a": text_a, "text_b": text_b, "winner": winner})
    return battles


def lore_split_of(survey: list[dict[str, Any]], conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """``PRISM/prepare.py``'s steps: people with a completed conversation; each person's dialogs; a dialog
    with no turn holding a message, a chosen and a rejected answer is deleted, and a person left without
    one too; the global numpy seed 123; people shuffled, 80% seen; each person with more than 5 dialogs:
    their dialogs shuffled, the first int(half) train, the rest test; seen people first."""
    data_user = {d["user_id"]: [] for d in survey if d["num_completed_conversations"] != 0}
    turns: dict[str, list[dict[str, list[str]]]] = {}
    for d in conversations:
        data_user[d["user_id"]].append(d["conversation_id"])
        slots: list[dict[str, list[str]]] = [{"user": [], "chosen": [], "rejected": []}
                                             for _ in range(d["conversation_turns"])]
        for u in d["conversation_history"]:
            key = "user" if u["role"] == "user" else "chosen" if u["if_chosen"] else "rejected"
            slots[u["turn"]][key].append(u["content"])
        turns[d["conversation_id"]] = slots
    for dialog, slots in turns.items():
        if all(not (s["user"] and s["chosen"] and s["rejected"]) for s in slots):
            owner = next(u for u, ds in data_user.items() if dialog in ds)
            data_user[owner].remove(dialog)
            if not data_user[owner]:
                del data_user[owner]
    np.random.seed(seed=123)
    user_ids = np.array(list(data_user.keys()))
    np.random.shuffle(user_ids)
    seen_init, unseen_init = user_ids[:int(len(user_ids) * 0.8)], user_ids[int(len(user_ids) * 0.8):]
    train, test, seen, unseen = np.array([]), np.array([]), [], []
    for group, kept in ((seen_init, seen), (unseen_init, unseen)):
        for user_id in group:
            mine = np.array(data_user[user_id])
            if len(mine) > 5:
                kept.append(user_id)
                np.random.shuffle(mine)
                train = np.concatenate((train, mine[:int(len(mine) * 0.5)]))
                test = np.concatenate((test, mine[int(len(mine) * 0.5):]))
    return {"train": set(train.tolist()), "test": set(test.tolist()), "seen": set(seen), "unseen": set(unseen),
            "turns": turns}


@pytest.fixture(scope="module")
def copy_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return _rows()


def _folder(tmp_path: Path, rows: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> Path:
    survey, conversations = rows
    return write_prism(tmp_path, survey, conversations, languages={})


def test_the_prism_preset_builds_the_authors_battles(tmp_path: Path, copy_rows) -> None:
    survey, conversations = copy_rows
    copy = read_prism(_folder(tmp_path, copy_rows), PRESETS["prism"])
    ours = sorted((p.person_id, c.chosen, c.rejected) for p in copy.people for c in p.choices)
    battles = authors_battles(conversations)
    theirs = sorted((b["user_id"], b["text_a"], b["text_b"]) if b["winner"] == "model_a"
                    else (b["user_id"], b["text_b"], b["text_a"]) for b in battles if b["winner"] != "tie")
    assert ours == theirs and len(ours) > 50
    assert copy.skipped[TIED] == sum(b["winner"] == "tie" for b in battles) > 0
    assert {c.interaction.split("/")[1] for p in copy.people for c in p.choices} == {"0"}  # the opening turn only
    # Pairs of two unchosen answers are in (they are battles), labelled by the scores.
    assert any(not c.key.split("/")[-1].isdigit() for p in copy.people for c in p.choices)


def test_the_lore_preset_builds_lores_test_half_with_its_cohorts(tmp_path: Path, copy_rows) -> None:
    survey, conversations = copy_rows
    split = lore_split_of(survey, conversations)
    assert split["seen"] and split["unseen"]  # the fixture reaches both cohorts
    copy = read_prism(_folder(tmp_path, copy_rows), PRESETS["lore"])
    choices = [(p.person_id, c) for p in copy.people for c in p.choices]
    assert {c.group for _, c in choices} == {d for d in split["test"]
                                           if any(s["rejected"] and s["chosen"] for s in split["turns"][d])}
    assert {(person, c.cohort) for person, c in choices} == (
        {(u, "seen user") for u in split["seen"]} | {(u, "unseen user") for u in split["unseen"]})
    # Per turn: the chosen answer against each rejected one, every turn (LoRe's chosen / rejected lists).
    expected = sorted((d, str(t), s["chosen"][0], r) for d in split["test"]
                      for t, s in enumerate(split["turns"][d]) if s["chosen"] for r in s["rejected"])
    ours = sorted((c.group, c.interaction.split("/")[1], c.chosen, c.rejected) for _, c in choices)
    assert ours == expected
    # The train half is the rest of the same people's conversations.
    train = read_prism(_folder(tmp_path, copy_rows), protocol_of("lore", conversations="train"))
    assert {c.group for p in train.people for c in p.choices} <= split["train"]
    seen = read_prism(_folder(tmp_path, copy_rows), protocol_of("lore", users="seen"))
    assert {p.person_id for p in seen.people} == split["seen"]


def test_each_option_alone(tmp_path: Path, copy_rows) -> None:
    folder = _folder(tmp_path, copy_rows)
    everything = read_prism(folder)
    pairs = [c for p in everything.people for c in p.choices]
    opening = [c for p in read_prism(folder, PrismProtocol(turns="opening")).people for c in p.choices]
    assert opening == [c for c in pairs if c.interaction.endswith("/0")]
    tied = read_prism(folder, PrismProtocol(tie=5))
    assert [c for p in tied.people for c in p.choices] == [c for c in pairs if abs(c.gap or 0) > 5]
    assert tied.skipped[TIED] == sum(abs(c.gap or 0) <= 5 for c in pairs)
    # Gap 0: the person's pick between two answers rated the same, a tie broken at random: kept by default,
    # in its own bucket.
    assert any(c.gap == 0 and c.gap_bucket == "gap 0" for c in pairs)
    balanced = read_prism(folder, PrismProtocol(balanced=True))
    survey, conversations = copy_rows
    flagged = {d["conversation_id"] for d in conversations if d["included_in_balanced_subset"]}
    assert {c.group for p in balanced.people for c in p.choices} == {c.group for c in pairs if c.group in flagged}
    many = read_prism(folder, PrismProtocol(min_conversations=6))
    counts = {p.person_id: len({c.group for c in p.choices}) for p in everything.people}
    assert {p.person_id for p in many.people} == {u for u, n in counts.items() if n >= 6}
    all_pairs = read_prism(folder, PrismProtocol(pairs="all"))
    assert all_pairs.skipped[UNLABELLED] > 0  # two unchosen answers of one score: no label
    assert {c.conversation_type for c in pairs} == set(TYPES)


def test_the_options_reach_the_tasks_and_are_checked(tmp_path: Path, copy_rows) -> None:
    from prb_tasks.documents.prism import build_docs

    folder = _folder(tmp_path, copy_rows)
    docs = build_docs("scalar", data_dir=str(folder), protocol="prism")
    assert len(docs) == sum(len(p.choices) for p in read_prism(folder, PRESETS["prism"]).people)
    assert {d["conversation_type"] for d in docs} == set(TYPES)
    lore = build_docs("scalar", data_dir=str(folder), protocol="lore")
    assert {d["cohort"] for d in lore} == {"seen user", "unseen user"}
    # An option beside a preset overrides it: the authors' pairs without their tie threshold.
    untied = build_docs("scalar", data_dir=str(folder), protocol="prism", tie=-1)
    assert len(untied) > len(docs)
    with pytest.raises(DataError, match=r"--metadata 'protocol'"):
        build_docs("scalar", data_dir=str(folder), protocol="authors")


def test_audit_splits_by_conversation_type_and_reports_gap_0_apart(tmp_path: Path, copy_rows) -> None:
    from prb_tasks.audit.data import AuditRequest, load_audit_data
    from prb_tasks.audit.people import group_lines

    folder = _folder(tmp_path, copy_rows)
    lines = group_lines(load_audit_data(AuditRequest(data=str(folder))).pairs)
    assert "  By conversation type (pairs; accuracy % of each shortcut where it applies):" in lines
    assert any(line.strip().startswith("controversy guided: ") for line in lines)
    assert any(line.strip().startswith("gap 0: ") for line in lines)
    lore = group_lines(load_audit_data(AuditRequest(data=str(folder), metadata={"protocol": "lore"})).pairs)
    assert any(line.strip().startswith("unseen user: ") for line in lore)

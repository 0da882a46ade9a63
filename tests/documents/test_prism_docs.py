"""PRISM's task variants: what each one shows, the leave-one-out history, the oracle's reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.documents import prism
from prb_tasks.prompts.prompt_store import doc_prompt
from tests.prism_fixture import write_prism

SELF = "Soy maestra jubilada en Valencia"
FEEDBACK = "It answered my question without lecturing me."


def _docs(tmp_path: Path, variant: str, **options) -> list[dict]:
    folder = tmp_path / "prism"
    if not folder.exists():
        write_prism(folder)
    return [{**d, "prompt": doc_prompt(d)} for d in prism.build_docs(variant, data_dir=str(folder), **options)]


def test_judge_sees_only_the_request_both_orders(tmp_path: Path) -> None:
    docs = _docs(tmp_path, "judge")
    assert len(docs) == 12 and [d["chosen_position"] for d in docs[:2]] == ["A", "B"]
    first = docs[0]
    assert "¿Es moral comer carne?" in first["prompt"] and SELF not in first["prompt"]
    assert "Female" not in first["prompt"] and FEEDBACK not in first["prompt"]
    assert (first["tags"], first["rating_gap"], first["country"], first["user_id"]) == (
        ["gap 30+"], 79.0, "Spain", "user0001")


def test_profile_shows_the_person_and_other_conversations_only(tmp_path: Path) -> None:
    docs = _docs(tmp_path, "profile")
    by_key = {(d["pair_key"], d["chosen_position"]): d["prompt"] for d in docs}
    opening = by_key[("user0001/c0001/0/1", "A")]
    assert SELF in opening and "- gender: Female" in opening and "Answer briefly. Never use bullet points." in opening
    # The history is the poem conversation only: never a pair of the same conversation, which
    # shares the chosen answer (the other pairs of turn 0) or continues from it (turn 1).
    assert "Give me a short poem about rain" in opening and "¿Y el pescado?" not in opening.split("=== New")[0]
    assert opening.count("=== Earlier comparison") == 1
    poem = by_key[("user0001/c0002/0/1", "A")]
    assert poem.count("=== Earlier comparison") == 2  # one per turn of c0001: its clearest pair
    assert "As an AI I cannot answer that." in poem and "Sí." not in poem  # turn 0: the 86-point gap
    assert FEEDBACK in poem  # another conversation's reason may be shown ...
    assert "Me gustó el poema corto." not in poem  # ... this one's may not
    single = by_key[("user0002/c0003/0/0", "A")]
    assert "No earlier choices of this person are available." in single and "Be kind." in single
    assert "None" not in single
    assert _docs(tmp_path, "profile", k=0)[0]["prompt"].count("=== Earlier comparison") == 0


def test_oracle_adds_the_persons_own_reason_where_there_is_one(tmp_path: Path) -> None:
    docs = {(d["pair_key"], d["chosen_position"]): d for d in _docs(tmp_path, "oracle")}
    # The reason of a choice is what the person rated as mattering in it (choice_attributes, opening
    # turn); open_feedback is about the whole conversation and is shown as that, apart.
    poem = docs[("user0002/c0003/0/0", "B")]
    assert "this very choice" in poem["prompt"] and "whole conversation" not in poem["prompt"]  # no open_feedback
    assert poem["has_reason"]
    opening = docs[("user0001/c0001/0/1", "A")]["prompt"]
    head, _, question = opening.partition("=== New comparison ===")
    reason, _, whole = head.partition("about the whole conversation")
    assert "What this person said about this very choice" in reason and "values 70" in reason
    assert FEEDBACK not in reason and FEEDBACK in whole
    assert "¿Es moral comer carne?" in question
    later = docs[("user0001/c0001/1/1", "A")]
    assert not later["has_reason"] and "this very choice" not in later["prompt"]


def test_scalar_variants(tmp_path: Path) -> None:
    bare = _docs(tmp_path, "scalar")
    assert len(bare) == 6 and bare[0]["prompt"] == "¿Es moral comer carne?"
    assert bare[0]["choices"] == ["Depende de tus valores; aquí tienes argumentos de ambos lados.", "Sí."]
    assert [d["chosen_first"] for d in bare][-1] is False
    personal = _docs(tmp_path, "scalar_profile")
    assert personal[0]["prompt"].startswith("About me, in my own words:\n- Self-description: " + SELF)
    assert personal[0]["prompt"].endswith("My request:\n¿Es moral comer carne?")


def test_options_are_checked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("PRB_PRISM_DIR", raising=False)
    with pytest.raises(DataError, match=r"prb data download DIR --family prism.*PRB_PRISM_DIR"):
        prism.build_docs("judge")
    with pytest.raises(DataError, match="not a folder"):
        prism.build_docs("judge", data_dir=str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="unknown prism variant 'judges'"):
        _docs(tmp_path, "judges")
    monkeypatch.setenv("PRB_PRISM_DIR", str(write_prism(tmp_path / "env")))
    assert len(prism.build_docs("scalar")) == 6

"""Community Alignment's task variants: the annotator's attributes, other conversations, their explanation."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.documents import community_alignment as ca
from prb_tasks.prompts.prompt_store import doc_prompt
from tests.community_alignment_fixture import SHARED_PROMPT, ca_rows, write_ca


def _docs(tmp_path: Path, variant: str, **options) -> list[dict]:
    folder = tmp_path / "ca"
    if not folder.exists():
        write_ca(folder, full=ca_rows()[:1])
    return [{**d, "prompt": doc_prompt(d)} for d in ca.build_docs(variant, data_dir=str(folder), **options)]


def test_variants_show_what_they_say(tmp_path: Path) -> None:
    bare = _docs(tmp_path, "judge")
    assert len(bare) == 26 and "France" not in bare[0]["prompt"] and SHARED_PROMPT in bare[0]["prompt"]
    assert (bare[0]["tags"], bare[0]["language"], bare[0]["country"]) == (["language fr"], "fr", "France")
    profile = {(d["pair_key"], d["chosen_position"]): d["prompt"] for d in _docs(tmp_path, "profile")}
    shared = profile[("101/1/first/a", "A")]
    assert "- political leaning: Middle-of-the-road, centrist" in shared and "Propose un plat végétarien" in shared
    assert "Chaque famille est différente." not in shared  # this conversation's own reason: oracle only
    oracle = {(d["pair_key"], d["chosen_position"]): d["prompt"] for d in _docs(tmp_path, "oracle")}
    assert "this very choice" in oracle[("101/1/first/a", "A")] and "Chaque famille" in oracle[("101/1/first/a", "A")]
    assert "this very choice" not in oracle[("102/2/first/a", "A")]  # 102 wrote nothing
    scalar = _docs(tmp_path, "scalar_profile")
    assert scalar[0]["prompt"].startswith("About me:\n- age: 35-45") and len(scalar) == 13


def test_split_option(tmp_path: Path, monkeypatch) -> None:
    assert len(_docs(tmp_path, "scalar", split="full")) == 3
    with pytest.raises(DataError, match="--metadata 'split'"):
        _docs(tmp_path, "scalar", split="all")
    monkeypatch.delenv("PRB_COMMUNITY_ALIGNMENT_DIR", raising=False)
    with pytest.raises(DataError, match="family community_alignment`, then pass"):
        ca.build_docs("scalar")

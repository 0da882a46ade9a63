"""Template overrides, sandboxing, clear errors; BM25 post retrieval."""

from __future__ import annotations

import pytest

from prb_tasks.data.personalized_rb.schema import ProfilePost
from prb_tasks.documents.personalized_rb import build_docs
from prb_tasks.prompts.retrieval import select_posts, truncate
from prb_tasks.prompts.templates import TemplateProblem, render, resolve


def test_user_files_replace_ours(tmp_path):
    system = tmp_path / "sys.jinja"
    system.write_text("Only rules. Reply Result: A or Result: B.")
    user = tmp_path / "user.jinja"
    user.write_text("Q={{ question }}\nA={{ response_a }}\nB={{ response_b }}")
    doc = build_docs("art", "both", data_dir="sample", system_template=str(system),
                     user_template=str(user))[0]
    assert doc["system_prompt"] == "Only rules. Reply Result: A or Result: B."
    assert doc["prompt"].startswith("Q=") and "\nA=" in doc["prompt"]


def test_template_folder_overrides_by_name_and_falls_back(tmp_path):
    (tmp_path / "judge").mkdir()
    (tmp_path / "judge" / "user.jinja").write_text("custom {{ question }}")
    doc = build_docs("art", "both", data_dir="sample", templates=str(tmp_path))[0]
    assert doc["prompt"].startswith("custom ")
    assert "Result: A" in doc["system_prompt"]  # ours, since the folder has no system.jinja


def test_sandbox_blocks_python_internals(tmp_path):
    evil = tmp_path / "evil.jinja"
    evil.write_text("{{ question.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(TemplateProblem, match="evil.jinja"):
        render(resolve("judge/user.jinja", override=str(evil)), question="q")


def test_broken_and_missing_templates_are_one_line_errors(tmp_path):
    broken = tmp_path / "broken.jinja"
    broken.write_text("{% for x in posts %}never closed")
    with pytest.raises(TemplateProblem) as info:
        build_docs("art", "both", data_dir="sample", user_template=str(broken))
    assert "broken.jinja" in str(info.value) and "\n" not in str(info.value)
    typo = tmp_path / "typo.jinja"
    typo.write_text("{{ questoin }}")
    with pytest.raises(TemplateProblem, match=r"typo.jinja.*questoin.*available variables"):
        build_docs("art", "both", data_dir="sample", user_template=str(typo))
    with pytest.raises(TemplateProblem) as info:
        build_docs("art", "both", data_dir="sample", user_template=str(tmp_path / "nope.jinja"))
    # The key the user gave is named (it said "template file ... (given for judge/user.jinja)").
    assert str(info.value) == (f"prb: --metadata user_template '{tmp_path / 'nope.jinja'}' does not exist; give a "
                               "Jinja file, which replaces judge/user.jinja")
    with pytest.raises(TemplateProblem) as info:
        build_docs("art", "both", data_dir="sample", system_template=str(tmp_path / "nope.jinja"))
    assert str(info.value).startswith(f"prb: --metadata system_template '{tmp_path / 'nope.jinja'}' does not exist")
    with pytest.raises(TemplateProblem) as info:
        build_docs("art", "both", data_dir="sample", templates=str(tmp_path / "nodir"))
    assert str(info.value).startswith(f"prb: --metadata templates '{tmp_path / 'nodir'}' does not exist or is not a "
                                      "folder; give a folder of replacement templates")


def test_bm25_ranks_relevant_posts_first_and_truncates():
    profile = [
        ProfilePost(category="Food", id="p1", text="I baked sourdough bread again this weekend."),
        ProfilePost(category="Bikes", id="p2", text="My road bike needs new brake pads and a chain."),
        ProfilePost(category="Bikes", id="p3", text="Commuting by bike in the rain: fenders help. " * 40),
        ProfilePost(category="Misc", id="p4", text="Watched a documentary about whales."),
    ]
    picked = select_posts("Which brake pads should I buy for my road bike?", profile, k=2, max_chars=120)
    assert [p.id for p in picked] == ["p2", "p3"]
    assert [p.rank for p in picked] == [1, 2]
    assert len(picked[1].text) <= 120 and picked[1].text.endswith("…")
    assert truncate("short", 10) == "short"

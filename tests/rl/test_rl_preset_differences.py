"""The ``paper`` preset lists where it departs from the authors' run (issue 50.6): they train one
policy per subset and drop prompts over 8,192 tokens; prb rl pools the subsets and keeps every prompt."""

from prb_tasks.rl.presets import DIFFERENCES


def test_policies_per_subset_and_the_prompt_limit_are_listed():
    listed = {name: (theirs, ours) for name, theirs, ours in DIFFERENCES}
    assert "one policy per subset" in listed["policies"][0] and "pooled" in listed["policies"][1]
    assert "8,192 tokens" in listed["prompt length"][0] and "no prompt dropped" in listed["prompt length"][1]


def test_the_docs_list_of_trl_differences_names_them_too():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "rl-downstream.md").read_text(encoding="utf-8")
    listed = page.split("Every difference TRL forces")[1].split("## Bad input")[0]
    assert "one per subset (`verl.sh <DATASET>`)" in listed and "drops prompts over 8,192 tokens" in listed

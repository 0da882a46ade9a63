"""Settings: every task declares what its model is shown, and ``prb compare`` ranks only
models shown the same thing (never a judge with history against a prompt-only RM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prb_tasks.common.taskindex import groups, task_info
from prb_tasks.report.build import build_report
from prb_tasks.report.settings import SETTINGS, declared
from tests.report_fixture import write_run

#: What each task family's model is shown, by task: the facts the YAMLs must declare.
EXPECTED = {
    "personalized_rb": "question", "personalized_rb_official": "question", "personalized_rb_scalar": "question",
    "personalized_rb_sample": "question", "personalized_rb_sample_scalar": "question",
    "personalized_rb_profile": "profile", "personalized_rb_scalar_profile": "profile",
    "personalized_rb_plan": "profile", "personalized_rb_planned": "plan", "personalized_rb_oracle": "oracle",
    "personalllm": "history", "personalllm_scalar": "question", "personalllm_scalar_history": "history",
    "personalllm_bon": "question", "personalllm_bon_history": "history", "personalllm_bon_judge": "history",
    "personalllm_gen": "history",
    # Best-of-N on Personalized RewardBench: policy, contestants and the grader (who sees the rubric).
    "personalized_rb_bon_sample": "profile", "personalized_rb_bon": "profile", "personalized_rb_bon_judge": "profile",
    "personalized_rb_bon_grade": "oracle",
    "personalized_custom": "demographics_history", "personalized_custom_scalar": "question",
    "personalized_custom_scalar_history": "demographics_history",
    "personalized_custom_example": "demographics_history", "personalized_custom_example_scalar": "question",
    "personalized_custom_example_scalar_history": "demographics_history",
    **{f"{family}_fewshot{kind}": "fewshot"
       for family in ("personalllm", "personalized_custom", "prism", "community_alignment", "personal_reward_bench")
       for kind in ("", "_judge", "_judge_similar")},
    **{f"personal_reward_bench_{half}{variant}": setting for half in ("arena", "prism")
       for variant, setting in (("", "history"), ("_kcurve", "fewshot"), ("_official_synthesizeme", "question"),
                                ("_official_pgenrm", "history"), ("_scalar", "question"),
                                ("_scalar_history", "history"))},
    # Real people: the request only, or what the person said about themselves and their other choices.
    **{f"{family}{variant}": setting for family in ("prism", "community_alignment")
       for variant, setting in (("", "question"), ("_scalar", "question"), ("_profile", "person"),
                                ("_scalar_profile", "person"), ("_oracle", "oracle"))},
    # General RM benchmarks: the RM sees the question only.
    **{f"rewardbench2_{s}": "question" for s in ("factuality", "precise_if", "math", "safety", "focus", "ties")},
    **{f"rewardbench2_judge_{s}": "question" for s in ("factuality", "precise_if", "math", "safety", "focus", "ties")},
    **{f"rmbench_{d}": "question" for d in ("chat", "math", "code", "safety")},
    **{f"rmbench_judge_{d}": "question" for d in ("chat", "math", "code", "safety")},
}


def test_every_task_declares_a_known_setting() -> None:
    settings = declared()
    group_names = {g.name for g in groups() if len(g.subtasks) > 1}
    leaves = set(task_info()) - group_names
    assert set(settings) == leaves and len(leaves) >= 40
    assert set(settings.values()) <= set(SETTINGS)
    for task, setting in settings.items():
        family = next((f for f in sorted(EXPECTED, key=len, reverse=True)
                       if task == f or task.startswith(f + "_") and task.rsplit("_", 1)[-1] in
                       ("art", "lifestyle", "society")), None)
        assert family is not None, task
        assert setting == EXPECTED[family], (task, setting)


def _sections(root: Path) -> dict[str, list[str]]:
    report = build_report([root])
    return {s.title: sorted(e.family.name for e in s.entries) for s in report.sections}


def test_custom_data_settings_are_grouped_by_what_the_model_saw(tmp_path: Path) -> None:
    source = {"kind": "file", "location": "/data/prefs.jsonl", "subset": "preferences", "rows": 12}
    ok = lambda key: int(key.split("/")[1]) % 2 == 0  # noqa: E731
    write_run(tmp_path / "judge", "personalized_custom", "prb-judge", {"model": "openai/j"}, ok, source=source)
    write_run(tmp_path / "rm", "personalized_custom_scalar", "prb-rm", {"pretrained": "rm"}, ok, source=source)
    write_run(tmp_path / "rm_h", "personalized_custom_scalar_history", "prb-rm", {"pretrained": "rm"}, ok,
              source=source)
    sections = _sections(tmp_path)
    where = "on the local copy /data/prefs.jsonl"
    assert sections == {
        f"personalized_custom, {SETTINGS['demographics_history']}, {where}":
            ["personalized_custom", "personalized_custom_scalar_history"],
        f"personalized_custom, question only, {where}": ["personalized_custom_scalar"],
    }


def test_personalllm_and_personalized_rb_settings(tmp_path: Path) -> None:
    ok = lambda key: True  # noqa: E731
    hub = {"kind": "hub", "location": "x", "subset": "test", "rows": 12}
    for task, model in (("personalllm", "prb-judge"), ("personalllm_scalar", "prb-rm"),
                        ("personalllm_scalar_history", "prb-rm")):
        write_run(tmp_path / "pl" / task, task, model, {"model": "m"}, ok, source=hub)
    for task, model in (("personalized_rb", "prb-judge"), ("personalized_rb_official", "prb-judge"),
                        ("personalized_rb_scalar", "prb-rm"), ("personalized_rb_profile", "prb-judge"),
                        ("personalized_rb_scalar_profile", "prb-rm"), ("personalized_rb_oracle", "prb-judge")):
        write_run(tmp_path / "rb" / task, task, model, {"model": "m"}, ok, source=hub)
    sections = _sections(tmp_path)
    assert sections == {
        "personalllm, question + the user's earlier choices, on the HF hub": ["personalllm",
                                                                              "personalllm_scalar_history"],
        "personalllm, question only, on the HF hub": ["personalllm_scalar"],
        "personalized_rb, question + the user's gold rubric aspects (diagnostic), on the HF hub":
            ["personalized_rb_oracle"],
        "personalized_rb, question + the user's past posts, on the HF hub": ["personalized_rb_profile",
                                                                             "personalized_rb_scalar_profile"],
        "personalized_rb, question only, on the HF hub": ["personalized_rb", "personalized_rb_official",
                                                          "personalized_rb_scalar"],
    }
    # --task selects a setting: the judge task brings its prompt-only RM twin, nothing with more input.
    report = build_report([tmp_path], ["personalized_rb"])
    assert [sorted(e.family.name for e in s.entries) for s in report.sections] == [
        ["personalized_rb", "personalized_rb_official", "personalized_rb_scalar"]]
    oracle = build_report([tmp_path], ["personalized_rb_oracle"]).sections
    assert len(oracle) == 1 and oracle[0].diagnostic


@pytest.mark.parametrize("task", ["personalized_rb_scalar", "personalllm_scalar"])
def test_a_run_without_a_declared_setting_falls_back_to_the_installed_yaml(tmp_path: Path, task: str) -> None:
    import json

    path = write_run(tmp_path, task, "prb-rm", {"scorer": "length"}, lambda key: True)
    data = json.loads(path.read_text())
    for config in data["configs"].values():
        del config["metadata"]["setting"]  # a run made before tasks declared their setting
    path.write_text(json.dumps(data))
    (section,) = build_report([tmp_path]).sections
    assert section.setting == "question"


def test_sections_follow_the_ladder_line(tmp_path: Path) -> None:
    """prb compare printed its sections oracle, plan, profile, question: the reverse of the ladder line
    (question only -> raw profile -> planner aspects -> oracle aspects) printed under them (issue 63)."""
    from prb_tasks.report.render_text import render_text

    source = {"kind": "hub", "location": "hub", "subset": "x", "rows": 12}
    ok = lambda key: int(key.split("/")[1]) % 3 != 0  # noqa: E731
    for variant in ("oracle", "both", "planned", "profile"):
        task = "personalized_rb" if variant == "both" else f"personalized_rb_{variant}"
        write_run(tmp_path / task, task, "prb-judge", {"model": "openai/j"}, ok, source=source, variant=variant)
    report = build_report([tmp_path])
    assert [s.setting for s in report.sections] == ["question", "profile", "plan", "oracle"]
    (ladder,) = report.ladders
    assert [r.variant for r in ladder.rungs] == ["both", "profile", "planned", "oracle"]
    text = render_text(report)
    heads = [text.index(f"personalized_rb, {SETTINGS[s]},") for s in ("question", "profile", "plan", "oracle")]
    assert heads == sorted(heads) and heads[-1] < text.index("ladder ")

"""What ``prb eval`` says before any model loads: a ``--limit`` that cuts an rmbench_judge
prompt's 18 judgments (they would be paid for, then left out of the matrix), and a
``data_dir`` of the general benchmarks or PersonalLLM that is not a folder."""

from __future__ import annotations

import pytest

from prb_tasks.cli.evalcmd import prepare


@pytest.fixture(autouse=True)
def forget_the_command_line():
    """prepare() declares its command line for the loaders; a later test on the same worker must not read it."""
    from prb_tasks.common import harness_args

    yield
    harness_args.declare(None)


def _prepare(monkeypatch, capsys, tasks: str, limit: str, data_dir: str = ".") -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-limit-0000")
    prepare(["--model", "prb-judge", "--model_args", "model=openai/gpt-4.1-mini", "--tasks", tasks,
             "--limit", limit, "--metadata", f'{{"data_dir": "{data_dir}"}}'])
    return capsys.readouterr().err


@pytest.mark.parametrize(("tasks", "limit", "cut"), [("rmbench_judge", "20", "2 judgments past 18"),
                                                     ("rmbench_judge_math,rmbench_chat", "7",
                                                      "no prompt is whole and all 7 judgments")])
def test_a_limit_that_cuts_a_prompt_is_said(monkeypatch, capsys, tasks, limit, cut):
    err = _prepare(monkeypatch, capsys, tasks, limit)
    lines = [line for line in err.splitlines() if "warning: --limit" in line]
    assert len(lines) == 1, err
    # Said under plain `lm_eval` too, so it does not name `prb eval`.
    assert lines[0].startswith(f"prb: warning: --limit {limit} with {tasks.split(',')[0]}:"), lines[0]
    assert f"--limit {limit} with {tasks.split(',')[0]}:" in lines[0] and cut in lines[0]
    assert "use a multiple of 18" in lines[0]


@pytest.mark.parametrize(("tasks", "limit"), [("rmbench_judge", "36"), ("rmbench_judge", "0.5"), ("rmbench", "20")])
def test_whole_prompts_or_a_scalar_run_are_quiet(monkeypatch, capsys, tasks, limit):
    assert "warning: --limit" not in _prepare(monkeypatch, capsys, tasks, limit)


@pytest.mark.parametrize("task", ["rmbench", "rewardbench2", "personalllm_scalar"])
def test_a_data_dir_that_is_not_a_folder_is_said_before_the_model_loads(monkeypatch, capsys, tmp_path, task):
    from prb_tasks.data.errors import DataError

    with pytest.raises(DataError, match=f"data_dir points to '{tmp_path / 'nowhere'}', which is not a folder"):
        _prepare(monkeypatch, capsys, task, "18", str(tmp_path / "nowhere"))


@pytest.mark.parametrize(("task", "metadata", "line"), [
    ("prism_scalar", {"protocol": "lora"},
     "prb: --metadata 'protocol': Input should be 'prb', 'prism' or 'lore' (got 'lora') (did you mean 'lore'?)"),
    ("prism_profile", {"turns": "openning"},
     "prb: --metadata 'turns': Input should be 'all' or 'opening' (got 'openning') (did you mean 'opening'?)"),
    ("community_alignment_scalar", {"split": "filterd"}, "prb: --metadata 'split': Input should be 'auto', 'latest', "
     "'filtered' or 'full' (got 'filterd') (did you mean 'filtered'?)"),
    ("personal_reward_bench_arena", {"k": -1},
     "prb: --metadata 'k': Input should be greater than or equal to 0 (got -1)"),
    ("personalllm_scalar", {"preset": "papr"}, "prb: --metadata 'preset': Input should be 'prb', 'paper' or "
     "'public_script' (got 'papr') (did you mean 'paper'?)"),
    ("personalized_rb_scalar_profile", {"retriever": "bm52"}, "prb: --metadata 'retriever' must be one of bm25, "
     "embedding, contriever, got 'bm52' (did you mean 'bm25'?)"),
    ("personalized_rb_profile", {"max_post_chars": 10},
     "prb: --metadata 'max_post_chars' must be 0 (whole posts) or at least 50, got 10"),
])
def test_a_bad_option_value_is_one_line_before_the_model_loads(capsys, tmp_path, task, metadata, line):
    """These were refused only by the task's loader, after the model had loaded (minutes for a large one), and a
    misspelt preset or split name got no "did you mean"."""
    import json

    from prb_tasks.data.errors import DataError

    with pytest.raises(DataError) as err:
        prepare(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks", task,
                 "--metadata", json.dumps({"data_dir": str(tmp_path), **metadata})])
    assert str(err.value) == line


@pytest.mark.parametrize(("task", "given", "line"), [
    ("prism_scalar", "ca", "has no survey.jsonl or conversations.jsonl; give the folder of a copy in the HF layout "
     "(`prb data download DIR --family prism` makes one)"),
    ("community_alignment_profile", "prism", "has no community_alignment.csv or data/filtered_community_alignment.csv "
     "or data/full_community_alignment.csv; give the folder of a copy in the HF layout (`prb data download DIR "
     "--family community_alignment` makes one)"),
    ("personal_reward_bench_prism_scalar", "ca", "has no prism_personalized_0125/data/ folder (PRISM half)"),
])
def test_another_familys_copy_is_one_line_before_the_model_loads(tmp_path, task, given, line):
    """Given the wrong family's copy, these were refused only by the loader, after the model had loaded."""
    import json

    from prb_tasks.data.errors import DataError
    from tests.community_alignment_fixture import ca_rows, write_ca
    from tests.prism_fixture import write_prism

    folder = write_prism(tmp_path / "prism") if given == "prism" else write_ca(tmp_path / "ca", full=ca_rows()[:1])
    with pytest.raises(DataError) as err:
        prepare(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks", task,
                 "--metadata", json.dumps({"data_dir": str(folder)})])
    assert str(err.value).startswith(f"prb: {folder} {line}"), err.value
    assert "\n" not in str(err.value)


def test_a_copy_with_the_tasks_files_passes_the_preflight(tmp_path):
    import json

    from prb_tasks.testing.personal_reward_bench_copy import write_copy

    folder = write_copy(tmp_path / "prb", users=1, halves=("prism",))
    prepare(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
             "personal_reward_bench_prism_scalar,personal_reward_bench_prism_scalar_history",
             "--metadata", json.dumps({"data_dir": str(folder), "k": 2})])


def test_a_key_of_a_family_the_run_lacks_is_refused_before_the_model_loads(tmp_path):
    """``pgenrm_prompts`` to a run of PRISM tasks alone was dropped without a word (the check meant to refuse a key
    none of the run's families takes let any family's key through); beside a PersonalRewardBench task it is that
    task's (one --metadata serves the whole run)."""
    import json

    from prb_tasks.documents.metadata import MetadataError
    from prb_tasks.testing.personal_reward_bench_copy import write_copy
    from tests.prism_fixture import write_prism

    folder = write_copy(write_prism(tmp_path / "both"), users=1, halves=("prism",))
    metadata = json.dumps({"data_dir": str(folder), "pgenrm_prompts": "PROMPTS.py"})
    with pytest.raises(MetadataError) as err:
        prepare(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "prism_scalar",
                 "--metadata", metadata])
    assert str(err.value).startswith("prb: unknown --metadata key 'pgenrm_prompts' for prism tasks (a key of the "
                                     "personal_reward_bench tasks, none of which this run has); accepted: ")
    prepare(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks",
             "prism_scalar,personal_reward_bench_prism_scalar", "--metadata", metadata])


def test_a_key_several_families_take_names_them_all(tmp_path):
    """``data_path`` (the custom-data and few-shot tasks' key) given to a PRISM run: the line named only the last
    family found that takes it."""
    import json

    from prb_tasks.documents.metadata import MetadataError
    from tests.prism_fixture import write_prism

    folder = write_prism(tmp_path / "prism")
    with pytest.raises(MetadataError) as err:
        prepare(["--model", "prb-rm", "--model_args", "scorer=length", "--tasks", "prism_scalar",
                 "--metadata", json.dumps({"data_dir": str(folder), "data_path": "mine.jsonl"})])
    assert str(err.value).startswith("prb: unknown --metadata key 'data_path' for prism tasks (a key of the "
                                     "fewshot and personalized_custom tasks, none of which this run has); ")

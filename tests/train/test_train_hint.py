"""``prb train``'s closing hint is an evaluation command that works on the data it trained on (issue 49.2)."""

from __future__ import annotations

import json
import shlex

import pytest

from prb_tasks.data.errors import DataError
from prb_tasks.documents.fewshot import build_docs
from prb_tasks.train.hint import evaluation_command, fewshot_task
from prb_tasks.train.sources import custom


def _metadata(command: str) -> dict:
    argv = shlex.split(command.replace("\\\n", " "))
    return json.loads(argv[argv.index("--metadata") + 1])


def test_hint_on_the_bundled_file_lowers_queries_so_someone_is_evaluated() -> None:
    _, few_shot = custom("example", {})
    command = evaluation_command("runs/rm", "custom", "example", True, {}, few_shot)
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[:6] == ["prb", "eval", "--model", "prb-method", "--model_args", "method=trained,checkpoint=runs/rm"]
    assert argv[argv.index("--tasks") + 1] == "personalized_custom_fewshot"
    meta = _metadata(command)
    assert meta == {"data_path": "example", "queries": 2}
    # What the evaluation reads: with the hint's metadata there are documents, without it none.
    assert build_docs("custom", "method", **meta)
    with pytest.raises(DataError, match="no user has 8 query pairs"):
        build_docs("custom", "method", data_path="example")


def test_hint_keeps_the_training_metadata_and_needs_no_lower_queries_when_users_suffice(tmp_path) -> None:
    prefs = [{"user_id": f"u{i}", "preferences": [
        {"prompt": f"q{i}-{n}", "response_A": "a", "response_B": "b", "chosen_response": "response_A"}
        for n in range(10)]} for i in range(6)]
    path = tmp_path / "prefs.json"
    path.write_text(json.dumps(prefs), encoding="utf-8")
    _, few_shot = custom(str(path), {"split_seed": 3})
    meta = _metadata(evaluation_command("rm", "custom", str(path), True, {"split_seed": 3}, few_shot))
    assert meta == {"data_path": str(path), "split_seed": 3}


def test_every_printed_line_of_the_hint_fits_and_the_task_is_the_familys() -> None:
    assert fewshot_task("personalllm") == "personalllm_fewshot"
    assert fewshot_task("prism") == "prism_fewshot"
    _, few_shot = custom("example", {})
    command = evaluation_command("runs/rm-context", "custom", "example", True, {}, few_shot)
    assert all(len("  " + line) <= 120 for line in command.splitlines())
    sample = evaluation_command("rm", "personalized_rb", "sample", False, {}, None)
    # The rows training held out, and only those (issue 62.1: the hint scored the 36 rows it trained on).
    assert shlex.split(sample.replace("\\\n", " "))[-4:] == ["--tasks", "personalized_rb_sample_scalar",
                                                            "--metadata", '{"rows": "rm/heldout_rows.txt"}']

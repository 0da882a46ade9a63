"""A command-line mistake in any ``prb`` subcommand is one line with a near miss, not argparse's usage block."""

from __future__ import annotations

import pytest

from prb_tasks.cli import main


@pytest.mark.parametrize(("argv", "line"), [
    (["data", "validate", "x", "--family", "prsm"], "prb data validate: argument --family: invalid choice: 'prsm' "
     "(choose from 'personalized_rb', 'personalllm', 'custom', 'rewardbench2', 'rmbench', 'prism', "
     "'community_alignment', 'personal_reward_bench') (did you mean 'prism'?) (see `prb data validate --help`)"),
    (["audit", "x", "--family", "comunity_alignment"], "prb audit: argument --family: invalid choice: "
     "'comunity_alignment' (choose from 'personalized_rb', 'personalllm', 'custom', 'prism', 'community_alignment') "
     "(did you mean 'community_alignment'?) (see `prb audit --help`)"),
    (["data", "valdate", "x"], "prb data: argument ACTION: invalid choice: 'valdate' (choose from 'download', "
     "'validate') (did you mean 'validate'?) (see `prb data --help`)"),
    (["compare", "runs", "--format", "yaml"], "prb compare: argument --format: invalid choice: 'yaml' (choose from "
     "'table', 'markdown', 'json') (see `prb compare --help`)"),
])
def test_a_command_line_mistake_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], line: str) -> None:
    """These printed argparse's usage (three to six lines) above the error, and no near miss."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert capsys.readouterr().err == line + "\n"


def test_validate_of_a_path_that_does_not_exist_names_no_family(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path) -> None:
    """``prb data validate ~/data/prsm`` (a typo, no --family) told a PRISM user about Personalized RewardBench's
    subset folders (<dir>/Art_and_Entertainment/...): nothing exists to guess the family from."""
    missing = tmp_path / "prsm"
    assert main(["data", "validate", str(missing)]) == 2
    assert capsys.readouterr().err == (f"prb: '{missing}' does not exist; give a local copy's folder (`prb data "
                                       "download DIR --family NAME` makes one), a preference file, or 'sample'\n")
    assert main(["data", "validate", "sample"]) == 0  # the bundled names still stand for their data

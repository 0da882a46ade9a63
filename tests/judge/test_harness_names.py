"""lm-eval's names for prb-judge's keys get a suggestion (issue 63 item 10: `base_url` had none)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from prb_tasks.judge.options import ModelArgs, describe_error


@pytest.mark.parametrize(("habit", "ours"), [("base_url", "api_base"), ("max_gen_toks", "max_tokens"),
                                             ("pretrained", "model")])
def test_lm_evals_name_suggests_prb_judges(habit: str, ours: str) -> None:
    with pytest.raises(ValidationError) as info:
        ModelArgs(**{habit: "x"})
    line = describe_error(info.value, "model_args", set(ModelArgs.model_fields))
    assert line.startswith(f"prb-judge: model_args: unknown key '{habit}' (did you mean '{ours}'? lm-eval's API "
                           f"backends call it {habit}) (accepted: "), line


def test_a_typo_still_gets_its_near_match() -> None:
    with pytest.raises(ValidationError) as info:
        ModelArgs(api_bse="x")
    assert "unknown key 'api_bse' (did you mean 'api_base'?)" in describe_error(info.value, "model_args",
                                                                                 set(ModelArgs.model_fields))

"""Messages that tell the truth, quickly: the wrong-cause, slow or silent answers of issue 26."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from prb_tasks.judge.errors import JudgeFatalError
from prb_tasks.judge.runner import unreachable_line
from tests.runner import run_cli

ONE_PREFERENCE_EACH = [
    {"user_id": "u1", "preferences": [{"prompt": "What to cook?", "response_A": "Pasta with tomatoes.",
                                       "response_B": "Rice and beans, slowly cooked.",
                                       "chosen_response": "response_A"}]},
    {"user_id": "u2", "preferences": [{"prompt": "Where to go?", "response_A": "The sea.",
                                       "response_B": "The mountains, for hiking.", "chosen_response": "response_B"}]},
]


def _eval(tmp_path: Path, *args: str) -> tuple[int, str, str, float]:
    started = time.monotonic()
    proc = run_cli(["eval", "--model", "prb-rm", *args], cwd=tmp_path)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


def test_a_misspelt_prb_task_is_reported_before_lm_eval_indexes_its_tasks(tmp_path: Path) -> None:
    rc, _, err, seconds = _eval(tmp_path, "--tasks", "personalized_rb_scalar_art,personalllm_scalr")
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        "prb eval: unknown task 'personalllm_scalr' (did you mean 'personalllm_scalar' or "
        "'personalllm_scalar_history'?); `prb tasks` lists prb's tasks, `lm-eval ls tasks` lm-eval's own"]
    # Indexing lm-eval's ~14,700 tasks alone takes 5-15 s; the check before it takes well under that.
    assert seconds < 5, seconds


def test_top_k_is_pointed_at_k(tmp_path: Path) -> None:
    rc, _, err, _ = _eval(tmp_path, "--tasks", "personalized_custom_example_scalar", "--metadata", '{"top_k": 3}')
    assert rc == 2
    assert err.strip().splitlines()[-1].startswith(
        "prb: unknown --metadata key 'top_k' for personalized_custom tasks (did you mean 'k'?); accepted: ")


def test_data_dir_on_a_custom_data_task_names_data_path(tmp_path: Path) -> None:
    rc, _, err, _ = _eval(tmp_path, "--tasks", "personalized_custom_scalar", "--metadata",
                          json.dumps({"data_dir": str(tmp_path)}))
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"prb: personalized_custom tasks read your preference file from the metadata key data_path; data_dir "
        f"({tmp_path}) names the folder of a benchmark's copy (PRISM, Personalized RewardBench, PersonalLLM, ...), "
        "not a file of yours; pass "
        "--metadata '{\"data_path\": \"FILE.jsonl\"}' (or \"example\" for the bundled example)")


@pytest.mark.slow
def test_bm25_without_any_history_warns_that_every_pair_ties(tmp_path: Path) -> None:
    data = tmp_path / "one_each.jsonl"
    data.write_text("".join(json.dumps(u) + "\n" for u in ONE_PREFERENCE_EACH), encoding="utf-8")
    rc, _, err, _ = _eval(tmp_path, "--model_args", "scorer=bm25", "--tasks", "personalized_custom_scalar_history",
                          "--metadata", json.dumps({"data_path": str(data)}))
    assert rc == 0, err[-2000:]
    assert ("prb-rm: warning: scorer=bm25 found no profile posts or history for 2 of 2 pairs, so it scored both "
            "answers of each alike and they tie") in err
    # Users with posts: no warning.
    rc, _, err, _ = _eval(tmp_path, "--model_args", "scorer=bm25", "--tasks", "personalized_rb_sample_scalar")
    assert rc == 0 and "found no profile posts" not in err, err[-2000:]


def test_unreachable_provider_is_not_blamed_on_an_api_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prb_tasks.judge.model import JudgeLM
    from tests.judge.test_judge_reliability import DOCS, requests_for

    # A proxy on a closed port stands for "no network" on any machine.
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("PRB_TEST_KEY", "sk-test-0000")
    lm = JudgeLM(model="openai/gpt-4o-mini", api_key_env="PRB_TEST_KEY", cache_dir=str(tmp_path),
                 backoff_base=0.01, num_concurrent=2)
    with pytest.raises(JudgeFatalError) as info:
        lm.generate_until(requests_for(lm, DOCS[:4]))
    line = str(info.value)
    assert line.startswith("prb-judge: the openai API is unreachable for openai/gpt-4o-mini (")
    assert line.endswith("check this machine's network connection or proxy settings")
    assert "api_base" not in line and "\n" not in line


def test_unreachable_server_with_api_base_names_it() -> None:
    line = unreachable_line("openai/m", "http://box:8000/v1", 5, "APIConnectionError: refused")
    assert line == ("prb-judge: could not connect to openai/m at http://box:8000/v1 (5 attempts; last: "
                    "APIConnectionError: refused); check that the server is running and api_base is right")

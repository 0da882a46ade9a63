"""A key held in a variable whose name does not look like a key's (``api_key_env=MYJUDGE``)
must still be hidden everywhere when the server echoes it back: the key *sent* is what is
redacted, not only values of variables with key-like names. Also: a key passed in
``--model_args`` is refused before lm-eval logs the model's arguments."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from prb_tasks.common.redact import is_secret_name, redact, register_secret
from prb_tasks.testing.fake_server import FakeLLMServer
from tests.e2e.test_judge_e2e import TASK, chosen_policy
from tests.runner import read_samples, run_cli

# Looks nothing like a key (no sk- prefix), in a variable whose name is no credential's.
CANARY = "Zq8vJ3mW1xN5rT0yCanary"
VARIABLE = "MYJUDGE"


def every_file(*folders: Path) -> dict[Path, str]:
    return {p: p.read_bytes().decode("utf-8", "replace")
            for folder in folders for p in folder.rglob("*") if p.is_file()}


def test_a_registered_value_is_redacted_whatever_holds_it() -> None:
    assert not is_secret_name(VARIABLE)
    value = "plainvalue-3c7d1e"
    assert redact(f"echo {value}") == f"echo {value}"
    assert register_secret(value, None, "abc") == (value,)  # too short to be a key: kept as is
    assert redact(f"Authorization: Bearer {value}; abc") == "Authorization: Bearer ***; abc"


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_an_echoed_key_from_any_variable_never_reaches_cache_samples_results_or_report(
    tmp_path: Path, transport: str
) -> None:
    env = {VARIABLE: CANARY}
    cache, out, report = tmp_path / "cache", tmp_path / "runs" / "judge", tmp_path / "report"
    with FakeLLMServer(chosen_policy(), echo_credentials=True, faults={"500": 0.2}, seed=3) as srv:
        args = ["eval", "--model", "prb-judge", "--model_args",
                f"model=openai/fake,api_base={srv.openai_base},api_key_env={VARIABLE},cache_dir={cache},"
                f"transport={transport},max_retries=0,num_concurrent=4",
                "--tasks", TASK, "--output_path", str(out), "--log_samples"]
        proc = run_cli(args, cwd=tmp_path, env=env)
        sent = [r["headers"].get("authorization") for r in srv.requests]
    assert proc.returncode == 0, proc.stderr[-2000:]
    # The key really went out, and the server really echoed it.
    assert sent and all(h == f"Bearer {CANARY}" for h in sent)
    replies = [s["resps"][0][0] for s in read_samples(out, "personalized_rb_sample_art")]
    assert all("authorization: Bearer ***" in r for r in replies)
    assert any(r.startswith("[prb:error]") for r in replies)  # echoed in error bodies too
    compare = run_cli(["compare", str(tmp_path / "runs"), "--out", str(report)], cwd=tmp_path, env=env)
    assert compare.returncode == 0, compare.stderr[-2000:]
    files = every_file(cache, tmp_path / "runs", report)
    assert any(p.name == "report.html" for p in files) and any(p.name == "report.md" for p in files)
    assert any(p.name == "cache.db" for p in files)
    leaks = [str(p) for p, text in files.items() if CANARY in text or quote(CANARY) in text]
    leaks += [name for name, text in (("stdout", proc.stdout + compare.stdout),
                                      ("stderr", proc.stderr + compare.stderr))
              if CANARY in text]
    assert leaks == []


@pytest.mark.parametrize("model", ["prb-judge", "prb-rm"])
def test_a_key_in_model_args_is_refused_before_lm_eval_logs_the_arguments(tmp_path: Path, model: str) -> None:
    secret = "sk-live-" + CANARY
    base = "model=openai/fake,api_base=http://127.0.0.1:9/v1" if model == "prb-judge" else "scorer=bm25"
    task = TASK if model == "prb-judge" else "personalized_rb_sample_scalar"
    proc = run_cli(["eval", "--model", model, "--model_args", f"{base},api_key={secret}", "--tasks", task],
                   cwd=tmp_path)
    assert proc.returncode == 2
    assert secret not in proc.stdout + proc.stderr and CANARY not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "api_key" in lines[0] and "do not pass an API key" in lines[0], proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["direct", "litellm"])
def test_a_key_in_the_api_base_query_is_sent_but_hidden_everywhere(tmp_path: Path, transport: str) -> None:
    # Issue 48 item 6: ``api_base=.../v1?key=SECRET`` was printed on stderr (lm-eval's
    # "Initializing ... with arguments"), in the table's label and 4 times in results_*.json.
    cache, out, report = tmp_path / "cache", tmp_path / "runs" / "judge", tmp_path / "report"
    with FakeLLMServer(chosen_policy(), echo_credentials=True, faults={"500": 0.2}, seed=3) as srv:
        args = ["eval", "--model", "prb-judge", "--model_args",
                f"model=openai/fake,api_base={srv.openai_base}?alt=sse&key={CANARY},cache_dir={cache},"
                f"transport={transport},max_retries=0,num_concurrent=4",
                "--tasks", TASK, "--output_path", str(out), "--log_samples"]
        proc = run_cli(args, cwd=tmp_path)
        paths = srv.stats()["by_path"]
    # Issue 63 item 6: through litellm the OpenAI client appended its path after the query
    # (POST /v1?...key=...chat/completions): wrong path, key corrupted. Both transports now
    # send the key whole, in the query, to the right path.
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert list(paths) == ["/v1/chat/completions"]
    # The key reached the server in the query (it echoes it back) and the run was judged.
    replies = [s["resps"][0][0] for s in read_samples(out, "personalized_rb_sample_art")]
    assert any("query key=***" in r for r in replies)
    assert "?alt=sse&key=***" in proc.stdout  # the table's label: the key's place, not its value
    assert "key=***" in proc.stderr  # lm-eval's log line of the model's arguments
    compare = run_cli(["compare", str(tmp_path / "runs"), "--out", str(report)], cwd=tmp_path)
    assert compare.returncode == 0, compare.stderr[-2000:]
    files = every_file(cache, tmp_path / "runs", report)
    results = [text for p, text in files.items() if p.name.startswith("results_")]
    assert len(results) == 1 and results[0].count("key=***") >= 2
    leaks = [str(p) for p, text in files.items() if CANARY in text]
    leaks += [name for name, text in (("stdout", proc.stdout + compare.stdout),
                                      ("stderr", proc.stderr + compare.stderr)) if CANARY in text]
    assert leaks == []


def test_key_like_query_values_are_masked_in_any_text_and_registered() -> None:
    from prb_tasks.common.redact import register_url_secrets

    value = "Qm4-query-secret"
    text = f"GET http://h/v1?alt=sse&api-key={value}&page=2, sig=x, {{'u': 'http://h?sig=abcd'}}"
    assert redact(text) == "GET http://h/v1?alt=sse&api-key=***&page=2, sig=x, {'u': 'http://h?sig=***'}"
    assert redact("?page=2&q=cats") == "?page=2&q=cats"
    decoded = "Pl+us/slash=="
    assert register_url_secrets(f"http://h/v1?key={quote(decoded, safe='')}") == (quote(decoded, safe=""), decoded)
    assert redact(f"the server said: bad key {decoded}") == "the server said: bad key ***"

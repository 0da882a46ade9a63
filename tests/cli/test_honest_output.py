"""What a run prints and writes says what ran: data source, metric legend, folder names."""

from __future__ import annotations

import json
import sys

import pytest

from prb_tasks.cli.outputs import folder_name
from prb_tasks.testing.fake_server import FakeLLMServer, always
from tests.conftest import write_layout
from tests.runner import flat, read_results, run_cli


def test_sample_run_names_its_data_and_lands_in_a_named_folder(tmp_path):
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-rm", "--model_args", "scorer=bm25",
                    "--tasks", "personalized_rb_sample_scalar", "--output_path", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [p.name for p in out.iterdir()] == ["prb-rm__bm25"]
    assert ("Data: bundled SYNTHETIC sample (written for this project: its numbers say nothing about the "
            "benchmark): Art_and_Entertainment 12, Lifestyle_and_Personal_Development 12, Society_and_Culture 12 "
            "rows (36 in total)") in flat(proc.stdout)
    sources = read_results(out)["prb"]["data_sources"]
    assert set(sources) == {"personalized_rb_sample_scalar_art", "personalized_rb_sample_scalar_lifestyle",
                            "personalized_rb_sample_scalar_society"}
    art = sources["personalized_rb_sample_scalar_art"]
    assert art["kind"] == "sample" and art["rows"] == 12 and art["subset"] == "Art_and_Entertainment"
    assert "fatal: not a git repository" not in proc.stderr


def test_config_file_run_takes_the_plugin_only_path(tmp_path, all_sample_rows):
    copy = write_layout(tmp_path / "copy", all_sample_rows, "jsonl")
    out = tmp_path / "runs"
    config = tmp_path / "run.yaml"
    config.write_text(
        "model: prb-rm\nmodel_args: scorer=length\ntasks: personalized_rb_scalar\n"
        f"output_path: {out}\nmetadata:\n  data_dir: {copy}\n", encoding="utf-8")
    # The task list comes from the YAML, so lm-eval's ~14,700 built-in tasks are not indexed.
    probe = ("from prb_tasks.cli.evalcmd import prepare; prepare(['--config', %r]);"
             "import lm_eval.tasks as t; print(len(t.TaskManager().all_tasks))" % str(config))
    count = run_cli(["-c", probe], cwd=tmp_path, program=[sys.executable])
    assert count.returncode == 0, count.stderr[-2000:]
    assert int(count.stdout.split()[-1]) < 1000  # ours (about 100), not the ~14,700 built-in
    proc = run_cli(["eval", "--config", str(config)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Data: local folder {copy.resolve()}: Art_and_Entertainment 12," in flat(proc.stdout)
    assert "Metrics:\n  acc: share of pairs where the chosen answer scored strictly higher" in proc.stdout
    sources = read_results(out)["prb"]["data_sources"]
    assert {s["kind"] for s in sources.values()} == {"local"}
    assert [p.name for p in out.iterdir()] == ["prb-rm__length"]


def _legend(stdout: str) -> list[str]:
    legend = stdout.split("Metrics:\n", 1)[1]
    # An entry is "  key: text"; a long one goes on in lines indented deeper.
    return [line.split(":", 1)[0].strip() for line in legend.splitlines()
            if line.startswith("  ") and not line.startswith("   ")]


def test_judge_legend_lists_only_its_metrics_and_pos_a_rate_has_no_arrow(tmp_path):
    with FakeLLMServer(policy=always("A")) as server:
        args = ["eval", "--model", "local-chat-completions", "--model_args",
                f"model=fake,base_url={server.openai_base}/chat/completions,num_concurrent=4",
                "--apply_chat_template", "--tasks", "personalized_rb_sample", "--limit", "2"]
        proc = run_cli([*args, "--full_tables"], cwd=tmp_path, env={"OPENAI_API_KEY": "sk-prb-test-0000"})
        compact = run_cli(args, cwd=tmp_path, env={"OPENAI_API_KEY": "sk-prb-test-0000"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if "|pos_a_rate" in line]
    assert rows and all("↓" not in row and "↑" not in row for row in rows)
    assert any("|acc_pair   |↑" in line for line in proc.stdout.splitlines())
    assert _legend(proc.stdout) == ["acc", "acc_macro", "acc_pair", "consistency", "double_game", "acc_pos_a",
                                    "acc_pos_b", "pos_bias", "pos_a_rate", "parse_fail", "error_rate", "skip_rate",
                                    "+/-"]
    legend = proc.stdout.split("Metrics:\n", 1)[1]
    assert "pos_a_rate: share of verdicts naming position A; 0.5 is ideal" in legend
    # max_cost belongs to prb-judge: this backend is not told about it.
    assert "max_cost" not in proc.stdout
    assert "skip_rate: share of judgments not sent (always 0 with this backend, which sends every judgment)" in legend
    # The default: one compact table, a legend of its columns, and the way to the full tables.
    assert compact.returncode == 0, compact.stderr[-3000:]
    assert "|" not in compact.stdout and "max_cost" not in compact.stdout
    assert _legend(compact.stdout) == ["acc", "acc_macro", "acc_pair", "consistency", "double_game", "pos_a_rate",
                                       "parse_fail", "95% CI*"]
    assert compact.stdout.rstrip().endswith("lm-eval's full tables: add --full_tables")


def test_compact_summary_of_a_judge_run(tmp_path):
    """A prb-judge run prints 25 lines of 120 columns at most where lm-eval's tables and legend took 76
    (plus the usage block)."""
    with FakeLLMServer(policy=always("A")) as server:
        proc = run_cli(["eval", "--model", "prb-judge", "--model_args",
                        f"model=openai/fake,api_base={server.openai_base},api_key_env=K,cache_dir={tmp_path / 'c'}",
                        "--tasks", "personalized_rb_sample", "--output_path", str(tmp_path / "runs"),
                        "--log_samples"], cwd=tmp_path, env={"K": "sk-prb-test-0000"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    # The server it talked to is part of the label (it changes what comes back), credentials never.
    label = f"prb-judge (model=openai/fake, api_base={server.openai_base.split('://')[1].rstrip('/')})"
    start = next(i for i, line in enumerate(lines) if line == label)
    summary = lines[start:]
    # 150 columns in one table: cut into two parts of whole columns, each naming the rows (120 at most).
    assert max(len(line) for line in summary) <= 120
    heads = [i for i, line in enumerate(summary) if line.startswith("task ")]
    assert heads == [1, 6]
    assert [c for i in heads for c in summary[i].split()] == [
        "task", "pairs", "acc", "%", "95%", "CI", "acc_macro", "%", "acc_pair", "%", "consistency", "%",
        "double_game", "%", "task", "pos_a_rate", "%", "parse_fail", "%"]
    # Always A: every pair is right in exactly one order, so every pair scores 1/2 and the
    # bootstrap over pairs has no spread (lm-eval's judgment-level error would claim one).
    assert summary[2].split()[:4] == ["personalized_rb_sample", "36", "50.0", "50.0-50.0"]
    assert [line.split()[0] for line in summary[3:6]] == ["Art_and_Entertainment",
                                                           "Lifestyle_and_Personal_Development", "Society_and_Culture"]
    assert summary[7].split() == ["personalized_rb_sample", "100.0", "0.0"]
    assert summary[11].startswith("Data: bundled SYNTHETIC sample")
    assert summary[-2].startswith("prb-judge usage summary: ") or summary[-1].startswith("prb-judge usage summary: ")
    table_and_legend = [line for line in summary if not line.startswith("prb-judge usage summary")]
    # 17 lines in 150 columns before; in 120 columns: the table's second part (5 lines), the
    # Data line's and two legend entries' second lines.
    assert len(table_and_legend) == 25, "\n".join(table_and_legend)
    assert len(lines) <= 32, proc.stdout  # with the judge's 6-line usage block


@pytest.mark.parametrize("model, args, expected", [
    ("prb-rm", {"scorer": "bm25"}, "prb-rm__bm25"),
    ("prb-rm", {}, "prb-rm__length"),
    ("prb-rm", "pretrained=./x,batch_size=8", "prb-rm__x"),
    ("prb-rm", {"pretrained": "Skywork/Skywork-Reward"}, None),  # lm-eval's Skywork__Skywork-Reward
    ("prb-rm", {"endpoint": "http://rm-box:8000", "served_model": "my-rm"}, "prb-rm__my-rm"),
    ("prb-rm", {"endpoint": "http://rm-box:8000/v1"}, "prb-rm__rm-box__8000"),
    ("prb-judge", {"config": "claude-sonnet"}, "anthropic__claude-sonnet-4-5"),
    ("prb-judge", {"model": "openai/gpt-4o-mini"}, None),
    ("hf", {"pretrained": "./checkpoints/run-7/"}, "hf__run-7"),
    ("hf", {"pretrained": "gpt2"}, None),
])
def test_folder_names(model, args, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert folder_name(model, args) == expected


def test_results_json_records_a_local_copy_and_rows_for_every_task(tmp_path, all_sample_rows):
    rows = {k: v[:5] for k, v in all_sample_rows.items()}
    copy = write_layout(tmp_path / "copy", rows, "parquet")
    out = tmp_path / "runs"
    proc = run_cli(["eval", "--model", "prb-rm", "--tasks", "personalized_rb_scalar_art,personalized_rb_scalar_society",
                    "--metadata", json.dumps({"data_dir": str(copy)}), "--output_path", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sources = read_results(out)["prb"]["data_sources"]
    assert sources == {
        f"personalized_rb_scalar_{short}": {"kind": "local", "location": str(copy.resolve()), "subset": config,
                                             "rows": 5}
        for short, config in (("art", "Art_and_Entertainment"), ("society", "Society_and_Culture"))
    }


def test_legend_for_a_mixed_run_explains_each_metric_once():
    from prb_tasks.scoring.legend import legend_lines

    results = {
        "results": {
            "judge_task": {"acc,none": 0.5, "acc_stderr,none": 0.1, "pos_a_rate,none": 0.5, "alias": "j"},
            "rm_task": {"acc,none": 0.6, "acc_macro,none": 0.6, "tie_rate,none": 0.0, "alias": "r"},
            "not_ours": {"exact_match,none": 1.0},
        },
        "configs": {"judge_task": {"output_type": "generate_until"}, "rm_task": {"output_type": "multiple_choice"}},
    }
    lines = legend_lines(results, {"judge_task", "rm_task"})
    names = [line.split(":", 1)[0] for line in lines]
    assert names == ["acc (judge tasks)", "pos_a_rate", "acc (scalar tasks)", "acc_macro", "tie_rate", "+/-"]
    assert legend_lines(results, set()) == []
